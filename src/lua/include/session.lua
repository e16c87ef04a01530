-- include/session.lua — one session (POST /sessions): a lease that holds on any number of locks
-- share. Its keys share the session's own hash tag ({<reference>}, a hash of its id: the id itself is
-- never stored), so a session script never touches a lock's keys, nor a lock script a session's; the
-- engine renews or drops the session's holds with one script per lock (src/locks/session-holds.ts).
--
-- KEYS[1]  hash  ttl (ms), exp (expiry, Redis ms), owner (label, '' for none), by (the API key that
--                opened it, '' while the service runs open), delay (the lock-delay of its holds, ms; absent: none)
-- KEYS[2]  hash  the session's holds: "<mode>|<token>|<lock key>" -> when it was bound (Redis ms; mode:
--                exclusive | read | write | permit; neither tokens nor lock keys contain '|'); at most
--                MAX_SESSION_HOLDS. A hold bound lately may still be waiting in line for its lock; 0
--                once its acquire made it.
-- Both keys expire with the session.

local function session_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The live session's ttl and expiry, opened by API key `by`; nil when there is none (a lapsed one is
-- deleted here, one opened by another API key counts as none).
local function live_session(now, by)
  local s = redis.call('HMGET', KEYS[1], 'ttl', 'exp', 'by')
  if not s[1] then return nil end
  if tonumber(s[2]) <= now then
    redis.call('DEL', KEYS[1], KEYS[2])
    return nil
  end
  if (s[3] or '') ~= by then return nil end
  return tonumber(s[1]), tonumber(s[2])
end

-- Both keys live exactly as long as the session.
local function keep_session(exp, now)
  redis.call('PEXPIRE', KEYS[1], exp - now)
  redis.call('PEXPIRE', KEYS[2], exp - now)
end
