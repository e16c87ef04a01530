-- rollback.lua — undo what one acquire attempt did, when the attempt did not become a grant
-- (no quorum, validity used up, client gone). Touches nothing another attempt has changed since.
--
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write'   ARGV[2] token   ARGV[3] attempt id
-- ARGV[4] fence hint, µs, for a hand-off to the next waiter (include/fence.lua)
--
-- Returns  1 when this attempt's change was undone (a new hold dropped, or its count put back),
--          0 when nothing of this attempt's was left
--@include holds
--@include fence
--@include queue

local mode, tok, attempt = ARGV[1], ARGV[2], ARGV[3]
local now = now_ms()

if mode == 'write' then
  local h = redis.call('HMGET', KEYS[1], 'w', 'wa', 'wac')
  if h[1] ~= tok or h[2] ~= attempt then return 0 end
  if tonumber(h[3]) == 0 then
    redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS))
  else
    redis.call('HSET', KEYS[1], 'wc', h[3], 'wa', '')
  end
  refresh_ttl(now)
  wake_front(now, false, ARGV[4] or '0')
  return 1
end

local r = get_reader(tok)
if not r or r.att ~= attempt then return 0 end
if r.attc == 0 then
  drop_reader(tok)
else
  r.count, r.att = r.attc, ''
  put_reader(tok, r, nil)
end
refresh_ttl(now)
wake_front(now, false, ARGV[4] or '0')
return 1
