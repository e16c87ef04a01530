-- force_release.lua — an operator drops a hold without its token: the write hold, or the read hold
-- that carries a given fence. The waiter(s) that can then proceed are woken.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua),
-- KEYS[8] lock-delays (include/delay.lua: a dropped hold's delay runs from now)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] fence of the read hold (ignored for 'write')
-- ARGV[3] fence hint, µs, for a hand-off to the next waiter (include/fence.lua)
--
-- Returns  1 when a hold was dropped, 0 when there was no such hold
--@include plain
--@include holds
--@include delay
--@include fence
--@include queue
--@include lost

local now = now_ms()
promote(now)
prune(now)
local dropped = 0
if ARGV[1] == 'write' then
  local tok = redis.call('HGET', KEYS[1], 'w')
  if tok then
    mark_lost('write', tok, 'force_released', now)
    delay_from_now('write', tok, now)
    redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS))
    dropped = 1
  end
else
  -- Bounded: a lock has at most MAX_READERS readers.
  for _, tok in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    local r = get_reader(tok)
    if r and r.fence == tonumber(ARGV[2]) then
      mark_lost(ARGV[1], tok, 'force_released', now)
      delay_from_now(ARGV[1], tok, now)
      drop_reader(tok)
      dropped = 1
      break
    end
  end
end
if dropped == 1 then
  refresh_ttl(now)
  wake_front(now, false, ARGV[3])
end
return dropped
