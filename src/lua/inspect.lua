-- inspect.lua — what GET /locks/:key and GET /rwlocks/:key show. Never returns a token; changes nothing.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] '1': also each live read hold (admin views: listing, ?readers=true), '' or none: not
--
-- Returns  { writerFence, writerRemainingMs, writerHoldCount, readers, waiters, writerWaiting }
--          with 0 for the writer fields when there is no live writer; with ARGV[1] = '1', followed by
--          fence, remainingMs, holdCount of each live read hold (at most MAX_READERS), by expiry
--@include holds

local now = now_ms()
local h = redis.call('HMGET', KEYS[1], 'wf', 'we', 'wc')
local we = tonumber(h[2] or '0')
local readers = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local waiters = redis.call('ZCARD', KEYS[4])
local writer_waiting = redis.call('ZCARD', KEYS[5])
local reply
if we > now then
  reply = { tonumber(h[1]), we - now, tonumber(h[3]), readers, waiters, writer_waiting }
else
  reply = { 0, 0, 0, readers, waiters, writer_waiting }
end
if ARGV[1] == '1' then
  local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    local r = get_reader(live[i])
    if r then
      reply[#reply + 1] = r.fence
      reply[#reply + 1] = tonumber(live[i + 1]) - now
      reply[#reply + 1] = r.count
    end
  end
end
return reply
