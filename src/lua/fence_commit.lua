-- fence_commit.lua — quorum mode: the grant's fence (the largest its majority proposed) must be this
-- grant's alone on a majority of nodes before the grant is returned. On one node a fence belongs to
-- at most one hold: the one that proposed it here (next_fence), or, when this node's counter is still
-- below it, the one committing it now (the counter moves up to it, so no later proposal here takes
-- it). Any two majorities share a node, so two grants can never both end with the same fence; and a
-- later majority's proposals are above it.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] fence
--
-- Returns  { COMMITTED }             the fence is this token's here (its hold, if this node has one,
--                                    carries it)
--          { FENCE_TAKEN, counter }  this node's counter already reached the fence by another proposal:
--                                    it may be another hold's; the caller tries a fence above `counter`
--@include holds
--@include plain

local mode, tok, fence = ARGV[1], ARGV[2], tonumber(ARGV[3])

local function own_fence()
  if mode == 'write' then
    if redis.call('HGET', KEYS[1], 'w') ~= tok then return nil end
    return tonumber(redis.call('HGET', KEYS[1], 'wf'))
  end
  local r = get_reader(tok)
  return r and r.fence
end

local function carry(f)
  if mode == 'write' then
    if redis.call('HGET', KEYS[1], 'w') == tok then redis.call('HSET', KEYS[1], 'wf', ARGV[3]) end
    return
  end
  local r = get_reader(tok)
  if r then
    r.fence = f
    put_reader(tok, r, nil)
  end
end

promote(now_ms())
if own_fence() == fence then return { COMMITTED } end
local counter = tonumber(redis.call('GET', KEYS[3]) or '0')
if counter >= fence then return { FENCE_TAKEN, counter } end
redis.call('SET', KEYS[3], ARGV[3], 'PX', FENCE_RETENTION_MS)
carry(fence)
return { COMMITTED }
