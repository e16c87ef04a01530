-- touch.lua — a live replica renews the leases of its waiters on one lock (about every second), and
-- drops the waiters at the front whose lease lapsed (their replica died), waking the new front.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] fence hint, µs, for a hand-off to a new head (include/fence.lua)   ARGV[2..] waiter ids
--
-- Returns  how many of the given waiters were still in line
--@include holds
--@include fence
--@include queue

local now = now_ms()
local present = 0
for i = 2, #ARGV do
  local w = waiter_info(ARGV[i])
  if w then
    w.lease = now + WAITER_LEASE_MS
    put_waiter(ARGV[i], w)
    present = present + 1
  end
end
if present > 0 then keep_line() end
if prune_line(now) > 0 then wake_front(now, true, ARGV[1]) end
return present
