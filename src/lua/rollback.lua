-- rollback.lua — undo what one acquire attempt did, when the attempt did not become a grant
-- (no quorum, validity used up, client gone). Touches nothing another attempt has changed since.
--
-- KEYS[1]  lock hash (see acquire.lua)
-- ARGV[1]  token   ARGV[2] attempt id
--
-- Returns  1 when this attempt's change was undone (a new hold deleted, or the count put back),
--          0 when there was nothing of this attempt's left

local h = redis.call('HMGET', KEYS[1], 'tok', 'att', 'attc')
if h[1] ~= ARGV[1] or h[2] ~= ARGV[2] then return 0 end
if tonumber(h[3]) == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'count', h[3], 'att', '')
end
return 1
