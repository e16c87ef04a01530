-- session_open.lua — open a session (POST /sessions).
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1] the API key opening it ('' while the service runs open)   ARGV[2] ttl ms   ARGV[3] owner, ''
-- ARGV[4] the lock-delay (ms) of its holds that give none of their own; absent: none
--
-- Returns  { OPENED, ttl }
--          { SESSION_EXISTS }   a session with this reference already exists (never with random ids)
--@include session

local now = session_now()
if redis.call('EXISTS', KEYS[1]) == 1 then return { SESSION_EXISTS } end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'ttl', ttl, 'exp', now + ttl, 'owner', ARGV[3], 'by', ARGV[1])
if ARGV[4] then redis.call('HSET', KEYS[1], 'delay', ARGV[4]) end
redis.call('PEXPIRE', KEYS[1], ttl)
return { OPENED, ttl }
