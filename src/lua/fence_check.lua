-- fence_check.lua — GET /locks/:key/fence/:fence (and under /rwlocks, /semaphores): is this fence a
-- live hold's on this node? Never returns a token; changes nothing. Reads the live holds only (no
-- prune, no include): a write hold is one HMGET; read and semaphore holds cost one HMGET over the live
-- ones (at most MAX_READERS, or a semaphore's limit), in batches of 1,000.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua); the others (every lock script's eight)
-- are not read
-- ARGV[1] the fence asked about (decimal digits)
--
-- Returns  { writerFence, readerHasFence, liveReaders, highestReaderFence }: the live writer's fence
--          (0: no live writer), 1 when a live read or semaphore hold carries the fence asked about
--          (else 0), how many read or semaphore holds are live, and the highest fence among them (0:
--          none)

--@include plain

local now = now_ms()
local asked = tonumber(ARGV[1])
local h = plain_fields('wf', 'we') or redis.call('HMGET', KEYS[1], 'wf', 'we')
local writer = 0
if tonumber(h[2] or '0') > now then writer = tonumber(h[1]) end
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
local has, highest = 0, 0
-- In batches: unpack takes a few thousand values at most, and a semaphore may have more holds.
for from = 1, #live, 1000 do
  local fields = {}
  for i = from, math.min(from + 999, #live) do fields[#fields + 1] = 'r:' .. live[i] end
  for _, v in ipairs(redis.call('HMGET', KEYS[1], unpack(fields))) do
    local fence = v and tonumber(string.match(v, '^(%d+)|'))
    if fence then
      if fence == asked then has = 1 end
      if fence > highest then highest = fence end
    end
  end
end
return { writer, has, #live, highest }
