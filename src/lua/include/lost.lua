-- include/lost.lua — the lost-lock signal (GET …/watch). A hold someone watches carries a flag (wv for
-- the writer, v:<token> for a read or semaphore hold; it goes with the hold). When such a hold is
-- released, force-released or dropped with its session, the script that removes it (before removing
-- it) keeps why and when in KEYS[7] (token -> "reason|at ms", for GONE_MEMORY_MS: a watcher that asks
-- just after still learns the reason) and pushes "<id>|<reason>|<at ms>" on LOST_CHANNEL, where every
-- replica listens: <id> is the SHA-1 of "<lock hash key>|<token>", so no token travels. Unwatched
-- holds cost nothing. An expiry needs no record: watchers time it themselves.
--
-- KEYS[7]  hash  token -> "reason|at" (reason: released | force_released | session_lost)

local function watch_flag(mode, tok)
  if mode == 'write' then return 'wv' end
  return 'v:' .. tok
end

local function mark_lost(mode, tok, reason, now)
  if redis.call('HEXISTS', KEYS[1], watch_flag(mode, tok)) == 0 then return end
  redis.call('HSET', KEYS[7], tok, reason .. '|' .. now)
  redis.call('PEXPIRE', KEYS[7], GONE_MEMORY_MS)
  redis.call('PUBLISH', LOST_CHANNEL, redis.sha1hex(KEYS[1] .. '|' .. tok) .. '|' .. reason .. '|' .. now)
end
