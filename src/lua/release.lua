-- release.lua — drop one hold of the owning token; the lock frees when its hold count reaches 0.
--
-- KEYS[1]  lock hash (see acquire.lua)
-- ARGV[1]  token
--
-- Returns  { 1, 0 }           RELEASED: the lock is free
--          { 2, holdCount }   DECREMENTED: a reentrant hold still has holdCount holds
--          { -2 }             NOT_FOUND: no hold (expired or released)
--          { -3 }             NOT_OWNER: held under another token

local tok = redis.call('HGET', KEYS[1], 'tok')
if not tok then return { -2 } end
if tok ~= ARGV[1] then return { -3 } end

local count = redis.call('HINCRBY', KEYS[1], 'count', -1)
if count > 0 then return { 2, count } end
redis.call('DEL', KEYS[1])
return { 1, 0 }
