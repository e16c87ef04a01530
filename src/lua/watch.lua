-- watch.lua — GET …/watch: whether a token still has its hold, and if so, flag it as watched, so that
-- whatever removes it says why (include/lost.lua). Changes nothing else.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] why watched holds went (include/lost.lua)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token
--
-- Returns  { HOLDING, fence, remainingMs, bound }   (bound: 1 when bound to a session, else 0)
--          { NOT_FOUND, reason, at, others }     gone: the reason include/lost.lua kept (released,
--                                                force_released, session_lost; at: Redis ms), or '' and 0
--                                                when no record is left (it expired, or this token never
--                                                held it); others: 1 when another live hold is on the
--                                                lock (renew.lua would answer NOT_OWNER), else 0
--@include holds
--@include label
--@include lost

--@include plain

local mode, tok = ARGV[1], ARGV[2]
local now = now_ms()
promote(now)
local fence, expires
if mode == 'write' then
  local h = redis.call('HMGET', KEYS[1], 'w', 'wf', 'we')
  if h[1] == tok then fence, expires = tonumber(h[2]), tonumber(h[3]) end
else
  local r = get_reader(tok)
  if r then fence, expires = r.fence, tonumber(redis.call('ZSCORE', KEYS[2], tok) or '0') end
end
if fence and expires > now then
  redis.call('HSET', KEYS[1], watch_flag(mode, tok), '1')
  return { HOLDING, fence, expires - now, bound_to(mode, tok) ~= '' and 1 or 0 }
end
-- Without pruning (a watch changes nothing): a live writer, or a live read or semaphore hold.
local function others()
  if tonumber(redis.call('HGET', KEYS[1], 'we') or '0') > now then return 1 end
  return redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') > 0 and 1 or 0
end
local gone = redis.call('HGET', KEYS[7], tok)
if not gone then return { NOT_FOUND, '', 0, others() } end
local reason, at = string.match(gone, '^([%a_]+)|(%d+)$')
return { NOT_FOUND, reason or '', tonumber(at) or 0, others() }
