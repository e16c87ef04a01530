-- session_bind.lua — note a hold as bound to the session, before the acquire that makes it (so that a
-- hold never exists bound to a session that does not know it: one that does not become a hold is
-- unbound again, or dropped at the next keepalive).
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1] the API key asking ('' while the service runs open)   ARGV[2] the hold "<mode>|<token>|<lock key>"
-- ARGV[3] the most holds a session may have (MAX_SESSION_HOLDS)
-- ARGV[4] 'held': the acquire made the hold; mark it as held (bound at 0), if it is still bound
--
-- Returns  { BOUND, ttl, remainingMs, owner, delay }   a new entry (owner: the session's label, '' for none;
--                                                   delay: its holds' lock-delay, ms, 0 for none)
--          { ALREADY_BOUND, ttl, remainingMs, owner, delay }
--                                                   it was bound already (a re-acquire; always, with 'held')
--          { SESSION_NOT_FOUND }
--          { TOO_MANY_HOLDS, holds, ttl }        the session has MAX_SESSION_HOLDS holds
--@include session

local now = session_now()
local ttl, exp = live_session(now, ARGV[1])
if not ttl then return { SESSION_NOT_FOUND } end
if ARGV[4] == 'held' then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then redis.call('HSET', KEYS[2], ARGV[2], 0) end
  return { ALREADY_BOUND, ttl, exp - now }
end
local s = redis.call('HMGET', KEYS[1], 'owner', 'delay')
local owner, delay = s[1] or '', tonumber(s[2] or '0')
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return { ALREADY_BOUND, ttl, exp - now, owner, delay } end
local holds = redis.call('HLEN', KEYS[2])
if holds >= tonumber(ARGV[3]) then return { TOO_MANY_HOLDS, holds, ttl } end
redis.call('HSET', KEYS[2], ARGV[2], now)
keep_session(exp, now)
return { BOUND, ttl, exp - now, owner, delay }
