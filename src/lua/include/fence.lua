-- include/fence.lua — next_fence(counter_key, now_us, hint): the next fencing token.
-- The fence is max(last + 1, Redis TIME in µs, hint): strictly above every fence this counter issued,
-- and never below the server clock, so a counter lost in a Redis restart cannot go back. The hint
-- (the service's clock plus a lead) makes the nodes of a quorum propose the same fence, so that no
-- second round is needed to store it on a majority. It may take a fence at most FENCE_LEAD_MAX_US (half
-- of FENCE_RETENTION_MS) ahead of this node's clock: the counter is kept FENCE_RETENTION_MS after its
-- last use, by this node's clock (key expiry), so when it lapses TIME has passed every fence it held.
-- The stored counter is what keeps fences rising until then. Its value is the last fence. acquire.lua's
-- fast path does the same inline (it runs before any include is defined); release.lua's fast path
-- includes this file where it hands a lock over.
-- Fences stay below 2^53 (exact in Lua doubles and JSON numbers) until about the year 2255.

-- The next fence, and its text: the hint's own when the hint is the fence (most grants; turning a Lua
-- number into text costs Redis about half a microsecond). `hint` is the text the service sent.
local function next_fence(counter_key, now, hint)
  local floor = math.max(1, now, math.min(tonumber(hint), now + FENCE_LEAD_MAX_US))
  local text = floor == tonumber(hint) and hint or string.format('%.0f', floor)
  -- Store the floor, reading what was there (one call when the floor is the answer, as for a new key).
  local was = redis.call('SET', counter_key, text, 'PX', FENCE_RETENTION_MS, 'GET')
  local last = was and tonumber(string.match(was, '^%d+')) or 0
  if last + 1 <= floor then return floor, text end
  text = string.format('%.0f', last + 1)
  redis.call('SET', counter_key, text, 'PX', FENCE_RETENTION_MS)
  return last + 1, text
end
