-- include/fence.lua — next_fence(counter_key, keep_ms): the next fencing token for one lock.
-- The fence is max(last + 1, Redis TIME in microseconds): strictly above every fence this counter
-- issued, and never below the server clock, so a counter lost in a Redis restart cannot go back.
-- Fences stay below 2^53 (exact in Lua doubles and JSON numbers) until the year 2255.
local function next_fence(counter_key, keep_ms)
  local now = redis.call('TIME')
  local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = tonumber(redis.call('GET', counter_key) or '0')
  local fence = math.max(last + 1, floor)
  redis.call('SET', counter_key, string.format('%.0f', fence), 'PX', keep_ms)
  return fence
end
