-- inspect.lua — what GET /locks/:key shows. Never returns the token.
--
-- KEYS[1]  lock hash (see acquire.lua)   KEYS[2] waiters (sorted set of queued requests)
--
-- Returns  { fence, remainingMs, holdCount, waiters }   when held
--          { 0, 0, 0, waiters }                          when free

local waiters = redis.call('ZCARD', KEYS[2])
local h = redis.call('HMGET', KEYS[1], 'fence', 'count')
if not h[1] then return { 0, 0, 0, waiters } end
return { tonumber(h[1]), redis.call('PTTL', KEYS[1]), tonumber(h[2]), waiters }
