-- fence_commit.lua — quorum mode: write the fence chosen for a grant (the largest proposed by the
-- granting majority) back to a node, so that a majority stores it before the grant is returned.
-- Any later majority intersects this one, so its largest proposal is above this fence.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] fence
--
-- Returns  1 when the node's hold (of this token) now carries the fence, 0 when only the counter
--          was raised (the node does not hold the lock for this token)
--@include holds

local mode, tok, fence = ARGV[1], ARGV[2], tonumber(ARGV[3])
if fence > tonumber(redis.call('GET', KEYS[3]) or '0') then
  redis.call('SET', KEYS[3], ARGV[3], 'PX', FENCE_MEMORY_MS)
end
if mode == 'write' then
  if redis.call('HGET', KEYS[1], 'w') ~= tok then return 0 end
  redis.call('HSET', KEYS[1], 'wf', ARGV[3])
  return 1
end
local r = get_reader(tok)
if not r then return 0 end
r.fence = fence
put_reader(tok, r, nil)
return 1
