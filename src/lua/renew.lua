-- renew.lua — extend one hold of the token that owns it.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[8] lock-delays (include/delay.lua: counted from the new expiry)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] ttl ms, or '0' for the TTL of the hold's
-- latest grant or renew
--
-- Returns  { RENEWED, fence, holdCount, ttlMs }   (a semaphore's hold: followed by its permits, the
--                                           semaphore's limit and the hold's slots)
--          { NOT_FOUND }                    nothing is held (expired or released)
--          { NOT_OWNER }                    held, but not by this token in this mode
local mode, tok = ARGV[1], ARGV[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The fast path: a live plain write hold of this token (include/plain.lua) is extended with one SET;
-- another token's is refused as it is.
-- Anything else falls through (test/locks/fast-path.test.ts compares it with the general path).
--@fast-path
if mode == 'write' then
  local counter = KEYS[1] .. ':fence'
  local v = redis.call('GET', counter)
  local fence, holder, s, us, kept, att
  if v then fence, holder, s, us, kept, att = string.match(v, PLAIN_HOLD_ATTEMPT) end
  if holder and tonumber(s) * 1000 + math.floor(tonumber(us) / 1000) + tonumber(kept) > now then
    -- Another token's: refused without a change (the general path would move it into the hash first).
    if holder ~= tok then return { NOT_OWNER } end
    local ttl = ARGV[3] == '0' and kept or ARGV[3]
    local keep = tonumber(ttl) > FENCE_KEEP_MS and ttl or FENCE_RETENTION_MS
    redis.call('SET', counter, fence .. '|' .. tok .. '|' .. time[1] .. '|' .. time[2] .. '|' .. ttl .. '|' .. att, 'PX', keep)
    return { RENEWED, tonumber(fence), 1, tonumber(ttl) }
  end
end
--@end-fast-path

--@include plain
--@include holds
--@include delay

promote(now)
prune(now)

if mode == 'write' then
  local h = redis.call('HMGET', KEYS[1], 'w', 'wf', 'wc', 'wt')
  if h[1] ~= tok then
    if held() then return { NOT_OWNER } end
    return { NOT_FOUND }
  end
  local ttl = tonumber(ARGV[3])
  if ttl == 0 then ttl = tonumber(h[4]) end
  redis.call('HSET', KEYS[1], 'wt', ttl, 'we', now + ttl)
  rearm_delay(mode, tok, now + ttl)
  refresh_ttl(now)
  return { RENEWED, tonumber(h[2]), tonumber(h[3]), ttl }
end

local r = get_reader(tok)
if not r then
  if held() then return { NOT_OWNER } end
  return { NOT_FOUND }
end
local ttl = tonumber(ARGV[3])
if ttl == 0 then ttl = r.ttl end
r.ttl = ttl
put_reader(tok, r, now + ttl)
rearm_delay(mode, tok, now + ttl)
refresh_ttl(now)
if r.permits then return with_slots({ RENEWED, r.fence, r.count, ttl, r.permits, tonumber(redis.call('HGET', KEYS[1], 'n')) }, r) end
return { RENEWED, r.fence, r.count, ttl }
