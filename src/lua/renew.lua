-- renew.lua — extend the hold of the token that owns the lock.
--
-- KEYS[1]  lock hash (see acquire.lua)
-- ARGV[1]  token   ARGV[2] ttl ms, or '0' to reuse the TTL of the latest grant or renew
--
-- Returns  { 1, fence, holdCount, ttlMs }   RENEWED
--          { -2 }                           NOT_FOUND: no hold (expired or released)
--          { -3 }                           NOT_OWNER: held under another token

local tok = redis.call('HGET', KEYS[1], 'tok')
if not tok then return { -2 } end
if tok ~= ARGV[1] then return { -3 } end

local ttl = ARGV[2]
if ttl == '0' then ttl = redis.call('HGET', KEYS[1], 'ttl') end
redis.call('HSET', KEYS[1], 'ttl', ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
local h = redis.call('HMGET', KEYS[1], 'fence', 'count')
return { 1, tonumber(h[1]), tonumber(h[2]), tonumber(ttl) }
