-- owners.lua — who holds a lock, by the owner labels its holds carry (include/label.lua): what
-- inspect, the listings and a 409 lock_held show. Never returns a token; changes nothing.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] the most read or semaphore holds to name
--
-- Returns  { writerFence, writerOwner, fence, owner, fence, owner, … }: the live writer's fence and
--          owner (0 and '' when there is none, '' when it has no owner), then each live read or
--          semaphore hold that has an owner, by expiry, at most ARGV[1] of them
--@include holds

--@include plain

local now = now_ms()
local h = plain_fields('wf', 'we', 'wo') or redis.call('HMGET', KEYS[1], 'wf', 'we', 'wo')
local reply = { 0, '' }
if tonumber(h[2] or '0') > now then reply = { tonumber(h[1]), h[3] or '' } end
local most = tonumber(ARGV[1])
-- Bounded: a lock has at most MAX_READERS readers, a semaphore at most its limit.
for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')) do
  if (#reply - 2) / 2 >= most then break end
  local owner = redis.call('HGET', KEYS[1], 'o:' .. tok)
  local r = owner and get_reader(tok)
  if r then
    reply[#reply + 1] = r.fence
    reply[#reply + 1] = owner
  end
end
return reply
