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

-- Waiters whose entries are read with one HMGET and written with one HSET (a replica with 10,000
-- waiters on one lock renews them all every second: two calls a waiter cost Redis ~60 ms of it).
local BATCH = 1000

local now = now_ms()
promote(now)
local present, lease = 0, now + WAITER_LEASE_MS
for first = 2, #ARGV, BATCH do
  local last = math.min(first + BATCH - 1, #ARGV)
  local entries = redis.call('HMGET', KEYS[6], unpack(ARGV, first, last))
  local renewed = {}
  for i = first, last do
    local w = entries[i - first + 1] and parse_waiter(entries[i - first + 1])
    if w then
      w.lease = lease
      renewed[#renewed + 1] = ARGV[i]
      renewed[#renewed + 1] = waiter_text(w)
    end
  end
  if #renewed > 0 then redis.call('HSET', KEYS[6], unpack(renewed)) end
  present = present + #renewed / 2
end
if present > 0 then keep_line() end
prune(now)
wake_front(now, prune_line(now) > 0, ARGV[1])
return present
