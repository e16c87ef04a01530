-- leave.lua — a waiter leaves the line (granted elsewhere, timed out, client gone, shutting down);
-- the new front of the line is woken so that it learns how long to sleep.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] waiter id
--
-- Returns  1 when the waiter was in line, 0 when it was not
--@include holds
--@include queue

if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then return 0 end
local was_head = redis.call('ZRANK', KEYS[4], ARGV[1]) == 0
leave_line(ARGV[1])
if was_head then wake_front(now_ms(), true) end
return 1
