-- include/fence.lua — next_fence(counter_key, now_us, hint): the next fencing token.
-- The fence is max(last + 1, Redis TIME in µs, hint): strictly above every fence this counter issued,
-- and never below the server clock, so a counter lost in a Redis restart cannot go back. The hint
-- (the service's clock plus a lead) makes the nodes of a quorum propose the same fence, so that no
-- second round is needed to store it on a majority. It may take a fence at most FENCE_LEAD_MAX_US (half
-- of FENCE_RETENTION_MS) ahead of this node's clock: the counter is kept FENCE_RETENTION_MS after its
-- last use, by this node's clock (key expiry), so when it lapses TIME has passed every fence it held.
-- The stored counter is what keeps fences rising until then. Its value is the last fence. acquire.lua's
-- fast path does the same inline (it runs before any include is defined).
-- Fences stay below 2^53 (exact in Lua doubles and JSON numbers) until about the year 2255.

-- The fence after `last` (the counter's), at this node's clock `now` (µs), with the service's hint.
local function fence_after(last, now, hint)
  return math.max(last + 1, now, math.min(tonumber(hint), now + FENCE_LEAD_MAX_US))
end

local function next_fence(counter_key, now, hint)
  local floor = fence_after(0, now, hint)
  -- Store the floor, reading what was there (one call when the floor is the answer, as for a new key).
  local was = redis.call('SET', counter_key, string.format('%.0f', floor), 'PX', FENCE_RETENTION_MS, 'GET')
  local last = was and tonumber(string.match(was, '^%d+')) or 0
  if last + 1 <= floor then return floor end
  redis.call('SET', counter_key, string.format('%.0f', last + 1), 'PX', FENCE_RETENTION_MS)
  return last + 1
end
