-- include/plain.lua — a plain write hold, kept in the lock's fence counter (KEYS[3]) instead of its hash.
-- The counter's value is "<fence>" (the last fence), or, while such a hold lives in it,
-- "<fence>|<token>|<granted or renewed at: TIME's seconds>|<and microseconds>|<ttl ms>|<attempt id>":
-- an exclusive write hold with a count of 1 and nothing else on the lock (no hash, readers, line or
-- lock-delays; no owner label, session or watch). acquire.lua's fast path makes one with a single SET on
-- a key that exists anyway (the hash form costs Redis a second key, seven fields and a PEXPIRE), and
-- release.lua and renew.lua's fast paths end or extend it with one. Every other path first moves it into
-- the hash (promote), so the general paths, and every other script, only know the hash.
-- Its times are TIME's own text, and the fence the hint's when they agree: turning a Lua number into
-- text costs Redis about half a microsecond each time.
-- While it carries a hold, the counter lives max(FENCE_RETENTION_MS, the hold's TTL) from the hold's
-- latest grant or renew: it outlives the hold, and still the fence it issued.
-- The counter's fence; with a plain hold, also its token, expiry (Redis ms), ttl and attempt (text),
-- and the fence as text.
local function plain_parts(v)
  if not v then return 0 end
  local f, tok, s, us, ttl, att = string.match(v, PLAIN_HOLD_ATTEMPT)
  if not f then return tonumber(v) end
  return tonumber(f), tok, tonumber(s) * 1000 + math.floor(tonumber(us) / 1000) + tonumber(ttl), ttl, att, f
end

-- Write a plain hold granted or renewed at `time` (TIME's reply), for `ttl` ms (text).
local function put_plain(fence, tok, time, ttl, att)
  local keep = tonumber(ttl) > FENCE_KEEP_MS and ttl or FENCE_RETENTION_MS
  redis.call('SET', KEYS[3], fence .. '|' .. tok .. '|' .. time[1] .. '|' .. time[2] .. '|' .. ttl .. '|' .. att, 'PX', keep)
end

-- Move a plain hold into the hash (a lapsed one is dropped); the counter keeps its fence and its TTL.
local function promote(now)
  local _, tok, expires, ttl, att, fence = plain_parts(redis.call('GET', KEYS[3]))
  if not tok then return end
  if expires > now then
    redis.call('HSET', KEYS[1], 'w', tok, 'wf', fence, 'wc', '1', 'wt', ttl, 'we', fmt(expires), 'wa', att, 'wac', '0')
    redis.call('PEXPIRE', KEYS[1], expires - now)
  end
  redis.call('SET', KEYS[3], fence, 'KEEPTTL')
end

-- The hash fields a plain hold stands for (those promote writes), read where it is: `...` named as for
-- HMGET, nil for a field a plain hold has none of (a label, a semaphore's). nil when the counter holds
-- no plain hold: then the hash has the holds. For scripts that only read.
local function plain_fields(...)
  local _, tok, expires, ttl, att, fence = plain_parts(redis.call('GET', KEYS[3]))
  if not tok then return nil end
  local value = { w = tok, wf = fence, wc = '1', wt = ttl, we = expires, wa = att, wac = '0' }
  local out = {}
  for i, field in ipairs({ ... }) do out[i] = value[field] end
  return out
end
