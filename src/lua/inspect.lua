-- inspect.lua — what GET /locks/:key and GET /rwlocks/:key show. Never returns a token; changes nothing.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (see include/holds.lua), KEYS[3] waiters zset
--
-- Returns  { writerFence, writerRemainingMs, writerHoldCount, readers, waiters, writerWaiting }
--          with 0 for the writer fields when there is no live writer
--@include holds

local now = now_ms()
local h = redis.call('HMGET', KEYS[1], 'wf', 'we', 'wc')
local we = tonumber(h[2] or '0')
local readers = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local waiters = redis.call('ZCARD', KEYS[3])
if we > now then
  return { tonumber(h[1]), we - now, tonumber(h[3]), readers, waiters, 0 }
end
return { 0, 0, 0, readers, waiters, 0 }
