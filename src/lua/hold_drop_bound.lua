-- hold_drop_bound.lua — a session ends (DELETE /sessions/:id): drop one of its holds on the hold's own
-- lock, whatever its count, if it is still bound to that session, and hand the lock to the waiter(s)
-- that can then proceed (include/queue.lua).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua),
-- KEYS[8] lock-delays (include/delay.lua: closing a session is its holder's release, so no delay)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] session reference
-- ARGV[4] fence hint, µs, for a hand-off (include/fence.lua)
--
-- Returns  { RELEASED }    the hold is gone
--          { NOT_FOUND }   no such hold bound to this session
--@include plain
--@include holds
--@include delay
--@include fence
--@include queue
--@include label
--@include lost

local mode, tok, ref = ARGV[1], ARGV[2], ARGV[3]
local now = now_ms()
promote(now)
prune(now)

local slots
if mode == 'write' then
  if redis.call('HGET', KEYS[1], 'w') ~= tok or bound_to(mode, tok) ~= ref then return { NOT_FOUND } end
  mark_lost(mode, tok, 'session_lost', now)
  disarm_delay(mode, tok)
  redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS))
else
  local r = get_reader(tok)
  if not r or bound_to(mode, tok) ~= ref then return { NOT_FOUND } end
  slots = r.slots
  mark_lost(mode, tok, 'session_lost', now)
  disarm_delay(mode, tok)
  drop_reader(tok)
end
refresh_ttl(now)
wake_front(now, false, ARGV[4], slots)
return { RELEASED }
