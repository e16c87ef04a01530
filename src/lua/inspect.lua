-- inspect.lua — what GET /locks/:key and GET /rwlocks/:key show. Never returns a token; changes nothing.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
--
-- Returns  { writerFence, writerRemainingMs, writerHoldCount, readers, waiters, writerWaiting }
--          with 0 for the writer fields when there is no live writer
--@include holds

local now = now_ms()
local h = redis.call('HMGET', KEYS[1], 'wf', 'we', 'wc')
local we = tonumber(h[2] or '0')
local readers = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local waiters = redis.call('ZCARD', KEYS[4])
local writer_waiting = redis.call('ZCARD', KEYS[5])
if we > now then
  return { tonumber(h[1]), we - now, tonumber(h[3]), readers, waiters, writer_waiting }
end
return { 0, 0, 0, readers, waiters, writer_waiting }
