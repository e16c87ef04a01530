-- include/plain.lua — a plain write hold: the lock's key (KEYS[1]) as a string instead of a hash.
-- An exclusive write hold with a count of 1 and nothing else on the lock (no readers, line or
-- lock-delays; no owner label, session or watch) is "<fence>|<token>|<ttl ms of its latest grant or
-- renew>|<attempt id>", and the key's own TTL is the hold's: Redis' expiry, by the same clock the
-- hash's `we` is read by, ends it. acquire.lua's fast path makes one with a single SET (the hash form
-- costs seven fields and a PEXPIRE), release.lua's ends it with a DEL, renew.lua's extends it with a
-- SET. Every other path first moves it into the hash (promote), and the scripts that only read take
-- its fields where it is (plain_fields), so the general paths know only the hash.
-- Being a string under the hash's name, a plain hold is never mistaken for a free lock by anything
-- that expects the hash: a script that does not know the form fails (WRONGTYPE) before it writes.

-- The hash fields of a new write hold, as HSET's field-value arguments (multiple returns: no table);
-- also a hand-off's (include/queue.lua: plain comes before queue in every script):
-- token, fence, count 1, ttl, expiry (Redis ms), attempt id, count before its latest grant 0.
local function new_writer(tok, fence, ttl, expires, att)
  return 'w', tok, 'wf', fence, 'wc', '1', 'wt', ttl, 'we', expires, 'wa', att, 'wac', '0'
end

-- A plain hold's parts: fence, token, ttl and attempt (text), and its ms left (PTTL); nil when the
-- lock's key is not a string.
local function plain_hold()
  if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return nil end
  local fence, tok, ttl, att = string.match(redis.call('GET', KEYS[1]), PLAIN_HOLD)
  return fence, tok, ttl, att, redis.call('PTTL', KEYS[1])
end

-- Move a plain hold into the hash, with the fields and TTL the general path would have given it.
local function promote(now)
  local fence, tok, ttl, att, left = plain_hold()
  if not fence then return end
  redis.call('DEL', KEYS[1])
  if left > 0 then
    redis.call('HSET', KEYS[1], new_writer(tok, fence, ttl, fmt(now + left), att))
    redis.call('PEXPIRE', KEYS[1], left)
  end
end

-- The hash fields a plain hold stands for (those promote writes), read where it is: `...` named as for
-- HMGET, nil for a field a plain hold has none of (a label, a semaphore's). nil when there is no plain
-- hold: then the hash has the holds. For scripts that only read.
local function plain_fields(now, ...)
  local fence, tok, ttl, att, left = plain_hold()
  if not fence then return nil end
  local fields = { new_writer(tok, fence, ttl, now + left, att) }
  local value = {}
  for i = 1, #fields, 2 do value[fields[i]] = fields[i + 1] end
  local out = {}
  for i, field in ipairs({ ... }) do out[i] = value[field] end
  return out
end
