-- session_close.lua — end a session (DELETE /sessions/:id): it is gone at once; the engine then drops
-- each of its holds on its own lock (hold_drop_bound.lua), handing them to their waiters.
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1] the API key asking ('' while the service runs open)
--
-- Returns  { CLOSED, hold, hold, … }   (each hold "<mode>|<token>|<lock key>")
--          { SESSION_NOT_FOUND }
-- Leaves KEYS[1] = { closed = <at ms> } for GONE_MEMORY_MS and pushes "<SHA-1 of KEYS[1]>|released|<at>" on
-- LOST_CHANNEL, for a watcher of the session (GET /sessions/:id/watch; include/lost.lua)
--@include session

local now = session_now()
if not live_session(now, ARGV[1]) then return { SESSION_NOT_FOUND } end
local reply = { CLOSED }
for _, hold in ipairs(redis.call('HKEYS', KEYS[2])) do reply[#reply + 1] = hold end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'closed', now)
redis.call('PEXPIRE', KEYS[1], GONE_MEMORY_MS)
redis.call('PUBLISH', LOST_CHANNEL, redis.sha1hex(KEYS[1]) .. '|released|' .. now)
return reply
