-- release.lua — drop one hold of the owning token; the hold ends when its count reaches 0, and the
-- lock is handed to the waiter(s) that can then proceed (include/queue.lua).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua),
-- KEYS[8] lock-delays (include/delay.lua: a release leaves none)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] fence hint, µs, for a hand-off (include/fence.lua)
-- ARGV[4] the calling replica's id ('' for none): pushes to its waiters come in the reply instead
--
-- Returns  { RELEASED, 0, push… }       this token's hold is gone; then the pushes to the calling
--                                       replica's waiters, as published otherwise (include/queue.lua)
--          { DECREMENTED, holdCount }   a reentrant hold still has holdCount holds
--          { NOT_FOUND }                nothing is held (expired or released)
--          { NOT_OWNER }                held, but not by this token in this mode
local mode, tok = ARGV[1], ARGV[2]

-- The fast path: a plain write hold (include/plain.lua) of this token ends with a DEL (another token's
-- is refused as it is); the last hold of a live write hold of this token, alone in its hash — no
-- readers, no lock-delays, nothing else in its hash — ends with the hash itself when nobody waits
-- (what the general path below leaves: nothing to keep, nobody to hand over to), or goes to the
-- waiter at the head of the line when that is a writer renewed lately, with no lock-delay: the hold
-- becomes the waiter's, as include/queue.lua's hand_off makes it (a hot key's every grant). Anything
-- else falls through (test/locks/fast-path.test.ts compares it with the general path); so does a
-- hand-off whose push nobody heard, once that waiter has left the line, as the general path would.
--@fast-path
if mode == 'write' then
  local lock = KEYS[1]
  local form = redis.call('TYPE', lock).ok
  if form == 'string' then
    -- Live, or Redis would not have it.
    if string.match(redis.call('GET', lock), PLAIN_HOLD_TOKEN) ~= tok then return { NOT_OWNER } end
    redis.call('DEL', lock)
    return { RELEASED, 0 }
  end
  if form == 'hash' then
    local h = redis.call('HMGET', lock, 'w', 'wc', 'we')
    -- Of the readers' zset, the line and the lock-delays, at most one key (the line, if anyone waits);
    -- HLEN: the hash holds the writer's seven fields and nothing else.
    local others = h[1] == tok and tonumber(h[2]) == 1 and redis.call('EXISTS', lock .. ':r', lock .. ':q', lock .. ':delay')
    if others and others <= 1 and redis.call('HLEN', lock) == 7 then
      local time = redis.call('TIME')
      local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
      if tonumber(h[3] or '0') > now then
        if others == 0 then
          redis.call('DEL', lock)
          return { RELEASED, 0 }
        end
        local line, entries, writers = lock .. ':q', lock .. ':qi', lock .. ':qw'
        local head = redis.call('ZRANGE', line, 0, 0)[1]
        local wmode, lease, wtok, wttl, permits, delay
        if head then
          wmode, lease, wtok, wttl, permits, delay = string.match(redis.call('HGET', entries, head) or '', WAITER_ENTRY)
        end
        if
          wmode == 'write'
          and permits == ''
          and (delay == '' or delay == '0')
          and tonumber(lease) - now >= WAITER_LEASE_MS - RENEWED_WITHIN_MS
        then
          -- next_fence, defined here so that no other path pays for its definition.
--@include fence
          local clock = tonumber(time[1]) * 1000000 + tonumber(time[2])
          local _, fence = next_fence(lock .. ':fence', clock, ARGV[3])
          redis.call('ZREM', line, head)
          redis.call('ZREM', writers, head)
          redis.call('HDEL', entries, head)
          if redis.call('ZCARD', line) == 0 then redis.call('DEL', line, writers, entries) end
          local push = head .. '|' .. fence .. '|' .. string.format('%.0f', clock)
          local replica = string.match(head, '^([^.]+)')
          local own = replica == ARGV[4]
          if own or redis.call('PUBLISH', WAKE_PREFIX .. replica, push) > 0 or not WAKE_COUNTS_RECEIVERS then
            local expires = math.floor(clock / 1000) + tonumber(wttl)
            redis.call('HSET', lock, 'w', wtok, 'wf', fence, 'wc', '1', 'wt', wttl, 'we', expires, 'wa', head, 'wac', '0')
            redis.call('PEXPIRE', lock, expires - now)
            if own then return { RELEASED, 0, push } end
            return { RELEASED, 0 }
          end
        end
      end
    end
  end
end
--@end-fast-path

--@include plain
--@include holds
--@include delay
--@include fence
--@include queue
--@include lost

own_replica = ARGV[4] ~= '' and ARGV[4] or nil
local now = now_ms()
promote(now)
prune(now)

if mode == 'write' then
  if redis.call('HGET', KEYS[1], 'w') ~= tok then
    if held() then return { NOT_OWNER } end
    return { NOT_FOUND }
  end
  local count = redis.call('HINCRBY', KEYS[1], 'wc', -1)
  if count > 0 then return { DECREMENTED, count } end
  mark_lost(mode, tok, 'released', now)
  disarm_delay(mode, tok)
  redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS))
  refresh_ttl(now)
  wake_front(now, false, ARGV[3])
  return with_own_pushes({ RELEASED, 0 })
end

local r = get_reader(tok)
if not r then
  if held() then return { NOT_OWNER } end
  return { NOT_FOUND }
end
if r.count > 1 then
  r.count = r.count - 1
  put_reader(tok, r, nil)
  return { DECREMENTED, r.count }
end
mark_lost(mode, tok, 'released', now)
disarm_delay(mode, tok)
drop_reader(tok)
refresh_ttl(now)
-- A semaphore's hold hands its slots on first.
wake_front(now, false, ARGV[3], r.slots)
return with_own_pushes({ RELEASED, 0 })
