-- leave.lua — a waiter leaves the line (granted elsewhere, timed out, client gone, shutting down);
-- the new front of the line is woken so that it learns how long to sleep. A waiter that gives up
-- also hands back a hold handed to it that it never took up (include/queue.lua hand_off), so that
-- the lock moves on at once instead of sitting until that hold's TTL.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] waiter id   ARGV[2] mode: 'read' | 'write'   ARGV[3] its token, or '' to keep a hold
--                                                       handed to it (it was granted)
-- ARGV[4] fence hint, µs, for a hand-off to the next waiter (include/fence.lua)
--
-- Returns  1 when the waiter was in line or a hold handed to it was dropped, 0 otherwise
--@include plain
--@include holds
--@include delay
--@include fence
--@include queue

local id, mode, tok, hint = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = now_ms()
promote(now)

-- A hand-off carries the waiter id as its attempt id: undoing that attempt hands it back.
if tok ~= '' and undo_attempt(mode, tok, id) then
  refresh_ttl(now)
  wake_front(now, false, hint)
  return 1
end

if not redis.call('ZSCORE', KEYS[4], id) then return 0 end
local was_head = redis.call('ZRANK', KEYS[4], id) == 0
leave_line(id)
if was_head then wake_front(now, true, hint) end
return 1
