-- touch.lua — a live replica renews the leases of its waiters on one lock (about every second), and
-- drops the waiters at the front whose lease lapsed (their replica died), waking the new front. Then
-- the front gets whatever is free for it (holds that lapsed are pruned first): a waiter that became
-- the head by a hand-off ahead of it has no timer for the holds ahead of it, so when their holder
-- dies without releasing, this is what moves the line on (within a second of the lapse).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] fence hint, µs, for a hand-off to a new head (include/fence.lua)   ARGV[2..] waiter ids
--
-- Returns  how many of the given waiters were still in line
--@include plain
--@include holds
--@include delay
--@include fence
--@include queue

local now = now_ms()
promote(now)
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
prune(now)
wake_front(now, prune_line(now) > 0, ARGV[1])
return present
