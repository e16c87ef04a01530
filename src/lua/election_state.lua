-- election_state.lua — an election as GET /elections/:name and its observers see it: the leader (never
-- its token) or none. With ARGV[1] = '1' (an observer's look) the leader's hold is flagged as watched,
-- so that whatever ends it pushes why (include/lost.lua); nothing else changes.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter (the term),
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua),
-- KEYS[8] lock-delays (include/delay.lua; not used here),
-- KEYS[9] the election's hash (election_stamp.lua: t, the terms begun)
-- ARGV[1] '1': flag the leader's hold as watched; '' or none: change nothing
--
-- Returns  { LEADING, term, remainingMs, revision, sinceMs, candidates, transitions, holdId, bound, candidate, value }
--            holdId: sha1("<KEYS[1]>|<token>"), the id include/lost.lua pushes when the hold goes;
--            bound: 1 when the hold is bound to a session; candidates: those waiting in line
--          { VACANT, lastTerm, candidates, transitions, pendingMs, pendingTerm }
--            lastTerm: the fence counter (the latest term begun, 0 when none is remembered);
--            pendingMs, pendingTerm: a hold granted whose term has no record yet (election_stamp.lua
--            follows its grant) lapses in this many ms, and its fence; 0 and 0 when there is none

--@include plain

local now = now_ms()
promote(now)
local h = redis.call('HMGET', KEYS[1], 'w', 'wf', 'we', 'wr', 'ws', 'wo', 'wx', 'wb')
local expires = tonumber(h[3] or '0')
local candidates = redis.call('ZCARD', KEYS[4])
local transitions = tonumber(redis.call('HGET', KEYS[9], 't') or '0')
if h[1] and expires > now and h[5] then
  if ARGV[1] == '1' then redis.call('HSET', KEYS[1], 'wv', '1') end
  local hold_id = redis.sha1hex(KEYS[1] .. '|' .. h[1])
  local bound = (h[8] and h[8] ~= '') and 1 or 0
  return {
    LEADING, tonumber(h[2]), expires - now, tonumber(h[4] or '1'), tonumber(h[5]), candidates, transitions, hold_id, bound,
    h[6] or '', h[7] or '',
  }
end
local pending, pending_term = 0, 0
if h[1] and expires > now then pending, pending_term = expires - now, tonumber(h[2]) end
return { VACANT, tonumber(redis.call('GET', KEYS[3]) or '0'), candidates, transitions, pending, pending_term }
