-- acquire.lua — take an exclusive hold, re-grant it to its current holder, or report it held.
--
-- KEYS[1]  lock hash      fields: tok (owner token), fence, count (hold count), ttl (ms of the latest
--                         grant or renew), att (id of the attempt that last changed it), attc (count
--                         before that attempt, for rollback.lua)
-- KEYS[2]  fence counter  (see include/fence.lua)
-- ARGV[1]  token          ARGV[2] ttl ms          ARGV[3] reentrant: '1' or '0'
-- ARGV[4]  attempt id     ARGV[5] how long the fence counter outlives its last use, ms
--
-- Returns  { 1, fence, holdCount, ttlMs }   GRANTED: a new hold
--          { 2, fence, holdCount, ttlMs }   REGRANTED: the token already held it; TTL reset, count +1
--                                           only when reentrant
--          { -1, remainingMs }              HELD by another token
--@include fence

local tok = redis.call('HGET', KEYS[1], 'tok')
local ttl = ARGV[2]

if not tok then
  local fence = next_fence(KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[1], 'tok', ARGV[1], 'fence', string.format('%.0f', fence), 'count', 1,
    'ttl', ttl, 'att', ARGV[4], 'attc', 0)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { 1, fence, 1, tonumber(ttl) }
end

if tok == ARGV[1] then
  local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
  local before = count
  if ARGV[3] == '1' then count = count + 1 end
  redis.call('HSET', KEYS[1], 'count', count, 'ttl', ttl, 'att', ARGV[4], 'attc', before)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { 2, tonumber(redis.call('HGET', KEYS[1], 'fence')), count, tonumber(ttl) }
end

return { -1, redis.call('PTTL', KEYS[1]) }
