-- session_keepalive.lua — renew a session for its TTL, and say which holds are bound to it (the
-- engine then renews each of them on its own lock: one script per lock, see src/locks/session-holds.ts).
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1] the API key asking ('' while the service runs open)
--
-- Returns  { RENEWED, ttl, now, hold, boundAt, hold, boundAt, … }   (each hold "<mode>|<token>|<lock key>",
--                                                                  and when it was bound, Redis ms; now: Redis ms)
--          { SESSION_NOT_FOUND }   lapsed, closed, never opened, or another API key's
--@include session

local now = session_now()
local ttl = live_session(now, ARGV[1])
if not ttl then return { SESSION_NOT_FOUND } end
redis.call('HSET', KEYS[1], 'exp', now + ttl)
keep_session(now + ttl, now)
local reply = { RENEWED, ttl, now }
-- Bounded: at most MAX_SESSION_HOLDS.
local holds = redis.call('HGETALL', KEYS[2])
for i = 1, #holds, 2 do
  reply[#reply + 1] = holds[i]
  reply[#reply + 1] = tonumber(holds[i + 1]) or 0
end
return reply
