-- include/fence.lua — next_fence(counter_key, now_us, hint): the next fencing token.
-- The fence is max(last + 1, Redis TIME in µs, hint): strictly above every fence this counter issued,
-- and never below the server clock, so a counter lost in a Redis restart cannot go back. The hint
-- (the service's clock plus a lead) makes the nodes of a quorum propose the same fence, so that no
-- second round is needed to store it on a majority. It may take a fence at most FENCE_LEAD_MAX_US (half
-- of FENCE_RETENTION_MS) ahead of this node's clock: the counter is kept FENCE_RETENTION_MS after its
-- last use, by this node's clock (key expiry), so when it lapses TIME has passed every fence it held.
-- The stored counter is what keeps fences rising until then.
-- Fences stay below 2^53 (exact in Lua doubles and JSON numbers) until about the year 2255.
local function next_fence(counter_key, now, hint)
  local floor = math.max(now, math.min(tonumber(hint), now + FENCE_LEAD_MAX_US))
  -- Store the floor, reading what was there (one call when the floor is the answer, as for a new key).
  local last = tonumber(redis.call('SET', counter_key, string.format('%.0f', floor), 'PX', FENCE_RETENTION_MS, 'GET') or '0')
  if last + 1 <= floor then return floor end
  redis.call('SET', counter_key, string.format('%.0f', last + 1), 'PX', FENCE_RETENTION_MS)
  return last + 1
end
