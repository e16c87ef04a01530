-- fence_commit.lua — quorum mode: write the fence chosen for a grant (the maximum proposed by the
-- granting majority) back to a node, so that a majority stores it before the grant is returned.
-- Any later majority intersects this one, so its maximum is above this fence.
--
-- KEYS[1]  lock hash (see acquire.lua)   KEYS[2] fence counter
-- ARGV[1]  token   ARGV[2] fence   ARGV[3] how long the fence counter outlives its last use, ms
--
-- Returns  1 when the node's hold (of this token) now carries the fence, 0 when only the counter
--          was raised (the node does not hold the lock for this token)

local fence = tonumber(ARGV[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if fence > last then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if redis.call('HGET', KEYS[1], 'tok') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'fence', ARGV[2])
  return 1
end
return 0
