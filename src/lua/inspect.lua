-- inspect.lua — what GET /locks/:key, GET /rwlocks/:key and GET /semaphores/:key show. Never returns a
-- token; changes nothing.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[8] lock-delays (include/delay.lua)
-- ARGV[1] '1': also each live read hold or semaphore hold (admin views: listing, ?readers=true),
--         '' or none: not
--
-- Returns  { writerFence, writerRemainingMs, writerHoldCount, readers, waiters, writerWaiting, limit,
--          permitsInUse, delayedMs } with 0 for the writer fields when there is no live writer, and for limit
--          and permitsInUse unless it is a semaphore (readers: its live holds); delayedMs: until the
--          last running lock-delay ends (0: none); with ARGV[1] = '1',
--          followed by fence, remainingMs, holdCount, permits (0 for a read hold) of each live hold
--          (at most MAX_READERS, or a semaphore's limit), by expiry
--@include plain
--@include holds
--@include delay
--@include queue

local now = now_ms()
local h = plain_fields(now, 'wf', 'we', 'wc', 'u') or redis.call('HMGET', KEYS[1], 'wf', 'we', 'wc', 'u')
local we = tonumber(h[2] or '0')
local readers = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local waiters = redis.call('ZCARD', KEYS[4])
local writer_waiting = redis.call('ZCARD', KEYS[5])
-- A semaphore's permits in use: those of its holds less those of the holds that lapsed (not yet pruned).
local in_use = tonumber(h[4] or '0')
if in_use > 0 then
  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
    local r = get_reader(tok)
    if r and r.permits then in_use = in_use - r.permits end
  end
end
local limit = (readers > 0 or waiters > 0) and current_limit() or 0
local reply
local delayed = delayed_for(now)
if we > now then
  reply = { tonumber(h[1]), we - now, tonumber(h[3]), readers, waiters, writer_waiting, limit, in_use, delayed }
else
  reply = { 0, 0, 0, readers, waiters, writer_waiting, limit, in_use, delayed }
end
if ARGV[1] == '1' then
  local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    local r = get_reader(live[i])
    if r then
      reply[#reply + 1] = r.fence
      reply[#reply + 1] = tonumber(live[i + 1]) - now
      reply[#reply + 1] = r.count
      reply[#reply + 1] = r.permits or 0
    end
  end
end
return reply
