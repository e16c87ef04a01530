-- hold_renew_bound.lua — a session's keepalive renews one of its holds, on the hold's own lock: the
-- hold of this token in this mode, if it is still bound to this session (include/label.lua).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[8] lock-delays (include/delay.lua: counted from the new expiry)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] session reference   ARGV[4] ttl ms
--
-- Returns  { RENEWED, fence, holdCount, ttlMs }   as renew.lua (a semaphore's hold: followed by its
--                                                permits, the semaphore's limit and its slots)
--          { NOT_FOUND }                        no such hold bound to this session
--@include holds
--@include delay
--@include label

--@include plain

local mode, tok, ref, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local now = now_ms()
promote(now)
prune(now)

if mode == 'write' then
  local h = redis.call('HMGET', KEYS[1], 'w', 'wf', 'wc')
  if h[1] ~= tok or bound_to(mode, tok) ~= ref then return { NOT_FOUND } end
  redis.call('HSET', KEYS[1], 'wt', ttl, 'we', now + ttl)
  rearm_delay(mode, tok, now + ttl)
  refresh_ttl(now)
  return { RENEWED, tonumber(h[2]), tonumber(h[3]), ttl }
end

local r = get_reader(tok)
if not r or bound_to(mode, tok) ~= ref then return { NOT_FOUND } end
r.ttl = ttl
put_reader(tok, r, now + ttl)
rearm_delay(mode, tok, now + ttl)
refresh_ttl(now)
if r.permits then return with_slots({ RENEWED, r.fence, r.count, ttl, r.permits, tonumber(redis.call('HGET', KEYS[1], 'n')) }, r) end
return { RENEWED, r.fence, r.count, ttl }
