-- election_stamp.lua — an election's leader: the record of its term, made once right after the grant
-- (POST /elections/:name/campaign: when it began, revision 1, its value), or a new value (PUT …/proclaim,
-- revision + 1). Either is pushed to the election's observers (src/locks/election-feeds.ts).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter (the term),
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua),
-- KEYS[8] lock-delays (include/delay.lua; not used here),
-- KEYS[9] the election's hash: t = the terms begun, kept FENCE_RETENTION_MS after its last change
-- ARGV[1] 'stamp' | 'proclaim'   ARGV[2] token   ARGV[3] the value ('' for none)
-- ARGV[4] when the term began (ms, the service's clock: its grant), so that every node keeps the same;
--         '' or none: this node's grant time
--
-- The leader's hold (a write hold) keeps ws (when its term began, Redis ms: its grant), wr (its
-- revision: 1, then + 1 per proclaim) and wx (its value) with its other fields (WRITER_FIELDS), and is
-- flagged as watched (wv), so whatever ends it pushes why (include/lost.lua). A stamp of a hold that
-- has its record already (a re-campaign by the leader) changes nothing.
-- Pushes "<sha1(KEYS[1])>|elected|<at ms>" or "…|proclaimed|…" on LOST_CHANNEL.
--
-- Returns  { STAMPED, term, revision, sinceMs, remainingMs, transitions, value }
--          { NOT_FOUND }   no live leader
--          { NOT_OWNER }   another token leads
--@include holds

--@include plain

local op, tok = ARGV[1], ARGV[2]
local now = now_ms()
promote(now)
local h = redis.call('HMGET', KEYS[1], 'w', 'we', 'wt', 'ws')
local expires = tonumber(h[2] or '0')
if not h[1] or expires <= now then return { NOT_FOUND } end
if h[1] ~= tok then return { NOT_OWNER } end

local function push(event)
  redis.call('PUBLISH', LOST_CHANNEL, redis.sha1hex(KEYS[1]) .. '|' .. event .. '|' .. now)
end

if not h[4] then
  -- The term's start: its grant (here: expiry less its TTL; no renew comes between a grant and its stamp).
  local since = tonumber(ARGV[4] or '') or math.min(now, expires - tonumber(h[3] or '0'))
  redis.call('HSET', KEYS[1], 'ws', fmt(since), 'wr', '1', 'wx', ARGV[3], 'wv', '1')
  redis.call('HINCRBY', KEYS[9], 't', 1)
  redis.call('PEXPIRE', KEYS[9], FENCE_RETENTION_MS)
  if op == 'stamp' then push('elected') end
end
if op == 'proclaim' then
  redis.call('HINCRBY', KEYS[1], 'wr', 1)
  redis.call('HSET', KEYS[1], 'wx', ARGV[3])
  push('proclaimed')
end
local s = redis.call('HMGET', KEYS[1], 'wf', 'wr', 'ws', 'wx')
local transitions = tonumber(redis.call('HGET', KEYS[9], 't') or '0')
return { STAMPED, tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), expires - now, transitions, s[4] or '' }
