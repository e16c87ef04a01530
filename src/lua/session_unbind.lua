-- session_unbind.lua — forget holds of a session: an acquire that did not become a hold, or holds a
-- keepalive found gone (released, expired, force-released, re-bound to another session).
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1..] the holds "<mode>|<token>|<lock key>"
--
-- Returns  how many of them were bound (an integer, no code)

local removed = 0
for i = 1, #ARGV do removed = removed + redis.call('HDEL', KEYS[2], ARGV[i]) end
return removed
