-- key_sessions.lua — the live sessions of one API key (MAX_SESSIONS_PER_KEY, when the service uses API
-- keys). Its own key, under the API key's own hash tag: a session's scripts never touch it, so opening,
-- keeping alive and closing a session each also run this, on its own.
--
--@keys 1
-- KEYS[1] zset  session reference -> its expiry (Redis ms)
-- ARGV[1] 'open' | 'keep' | 'close'   ARGV[2] session reference   ARGV[3] ttl ms ('open', 'keep')
-- ARGV[4] 'open': the most live sessions the API key may have
--
-- Returns  { NOTED }                    done
--          { TOO_MANY_SESSIONS, live }  ('open' only)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op, ref = ARGV[1], ARGV[2]
if op == 'close' then
  redis.call('ZREM', KEYS[1], ref)
  return { NOTED }
end
local expires = now + tonumber(ARGV[3])
if op == 'keep' then
  redis.call('ZADD', KEYS[1], 'XX', expires, ref)
else
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local live = redis.call('ZCARD', KEYS[1])
  if live >= tonumber(ARGV[4]) then return { TOO_MANY_SESSIONS, live } end
  redis.call('ZADD', KEYS[1], expires, ref)
end
-- The set outlives its latest session, and no more.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], tonumber(last[2])) end
return { NOTED }
