-- rollback.lua — undo what one acquire attempt did, when the attempt did not become a grant
-- (no quorum, validity used up, client gone). Touches nothing another attempt has changed since.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] attempt id
-- ARGV[4] fence hint, µs, for a hand-off to the next waiter (include/fence.lua)
--
-- Returns  1 when this attempt's change was undone (a new hold dropped, or its count put back),
--          0 when nothing of this attempt's was left
--@include plain
--@include holds
--@include delay
--@include fence
--@include queue

local now = now_ms()
promote(now)
if not undo_attempt(ARGV[1], ARGV[2], ARGV[3]) then return 0 end
refresh_ttl(now)
wake_front(now, false, ARGV[4])
return 1
