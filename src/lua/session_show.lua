-- session_show.lua — what GET /sessions/:id shows; changes nothing.
--
--@keys 2
-- KEYS[1] session hash, KEYS[2] its holds (include/session.lua)
-- ARGV[1] the API key asking ('' while the service runs open)
--
-- Returns  { LIVE, ttl, remainingMs, owner, hold, hold, … }   (owner '' for none; each hold
--                                                             "<mode>|<token>|<lock key>")
--          { SESSION_NOT_FOUND, closedAt }                    (closedAt: when DELETE closed it, lately;
--                                                             else 0)
--@include session

local now = session_now()
local s = redis.call('HMGET', KEYS[1], 'ttl', 'exp', 'owner', 'by', 'closed')
if not s[1] then return { SESSION_NOT_FOUND, tonumber(s[5] or '0') } end
if tonumber(s[2]) <= now or (s[4] or '') ~= ARGV[1] then return { SESSION_NOT_FOUND, 0 } end
local reply = { LIVE, tonumber(s[1]), tonumber(s[2]) - now, s[3] or '' }
for _, hold in ipairs(redis.call('HKEYS', KEYS[2])) do reply[#reply + 1] = hold end
return reply
