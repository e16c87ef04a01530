-- acquire.lua — take a hold (read or write), re-grant it to its current holder, or report why not.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (see include/holds.lua), KEYS[3] fence counter
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] ttl ms   ARGV[4] reentrant: '1' | '0'
-- ARGV[5] attempt id   ARGV[6] how long the fence counter outlives its last use, ms
-- ARGV[7] most readers one lock may have
--
-- Returns  { 1, fence, holdCount, ttlMs }   GRANTED: a new hold
--          { 2, fence, holdCount, ttlMs }   REGRANTED: this token already held it in this mode; TTL
--                                           reset, count +1 only when reentrant
--          { -1, remainingMs }              HELD: a conflicting hold; remainingMs until it lapses
--          { -4 }                           UPGRADE: a write asked for by a token holding a read
--          { -5 }                           TOO_MANY_READERS
--@include holds
--@include fence

local mode, tok, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
prune(now)
local w = redis.call('HGET', KEYS[1], 'w')

if mode == 'write' then
  if w == tok then
    local h = redis.call('HMGET', KEYS[1], 'wf', 'wc')
    local count = tonumber(h[2])
    local before = count
    if ARGV[4] == '1' then count = count + 1 end
    redis.call('HSET', KEYS[1], 'wc', count, 'wt', ttl, 'we', now + ttl, 'wa', ARGV[5], 'wac', before)
    refresh_ttl(now)
    return { 2, tonumber(h[1]), count, ttl }
  end
  if w then return { -1, tonumber(redis.call('HGET', KEYS[1], 'we')) - now } end
  if redis.call('HEXISTS', KEYS[1], 'r:' .. tok) == 1 then return { -4 } end
  local last_reader = last_expiry()
  if last_reader > now then return { -1, last_reader - now } end
  local fence = next_fence(KEYS[3], ARGV[6])
  redis.call('HSET', KEYS[1], 'w', tok, 'wf', fmt(fence), 'wc', 1, 'wt', ttl, 'we', now + ttl, 'wa', ARGV[5], 'wac', 0)
  refresh_ttl(now)
  return { 1, fence, 1, ttl }
end

local r = get_reader(tok)
if r then
  local before = r.count
  if ARGV[4] == '1' then r.count = r.count + 1 end
  r.ttl, r.att, r.attc = ttl, ARGV[5], before
  put_reader(tok, r, now + ttl)
  refresh_ttl(now)
  return { 2, r.fence, r.count, ttl }
end
-- A writer may take a read hold with its own token (then release the write: a downgrade, no gap).
if w and w ~= tok then return { -1, tonumber(redis.call('HGET', KEYS[1], 'we')) - now } end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then return { -5 } end
local fence = next_fence(KEYS[3], ARGV[6])
put_reader(tok, { fence = fence, count = 1, ttl = ttl, att = ARGV[5], attc = 0 }, now + ttl)
refresh_ttl(now)
return { 1, fence, 1, ttl }
