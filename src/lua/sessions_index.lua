-- sessions_index.lua — every live session of the service, for its metrics (the lock_sessions gauge and
-- lock_session_expiries_total). Its own key, under its own hash tag: a session's scripts never touch
-- it, so opening, keeping alive and closing a session each also run this, on its own (best effort: a
-- gauge, never a decision).
--
--@keys 1
-- KEYS[1] zset  session reference -> its expiry (Redis ms)
-- ARGV[1] 'open' | 'keep' | 'close' | 'census'   ARGV[2] session reference   ARGV[3] ttl ms ('open', 'keep')
--
-- Returns  { NOTED }                   open, keep, close: done
--          { COUNTED, live, expired }  census: the sessions live now, and those that lapsed since the
--                                      last census (removed here, so each lapse is counted once per node)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[1]
if op == 'census' then
  local expired = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  return { COUNTED, redis.call('ZCARD', KEYS[1]), expired }
end
if op == 'close' then
  redis.call('ZREM', KEYS[1], ARGV[2])
elseif op == 'keep' then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[3]), ARGV[2])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
end
return { NOTED }
