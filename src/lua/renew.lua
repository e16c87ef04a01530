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

-- The fast path: a plain write hold of this token (include/plain.lua) is extended with one SET (its
-- key's TTL is the hold's); another token's is refused as it is. Anything else falls through
-- (test/locks/fast-path.test.ts compares it with the general path).
--@fast-path
if mode == 'write' and redis.call('TYPE', KEYS[1]).ok == 'string' then
  local fence, holder, kept, att = string.match(redis.call('GET', KEYS[1]), PLAIN_HOLD)
  if holder ~= tok then return { NOT_OWNER } end
  local ttl = ARGV[3] == '0' and kept or ARGV[3]
  redis.call('SET', KEYS[1], fence .. '|' .. tok .. '|' .. ttl .. '|' .. att, 'PX', ttl)
  return { RENEWED, tonumber(fence), 1, tonumber(ttl) }
end
--@end-fast-path

--@include plain
--@include holds
--@include delay

local now = now_ms()
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
