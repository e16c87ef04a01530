-- hold_state.lua — whether a token still has its hold, and for how long (GET /sessions/:id lists its
-- holds with it). Changes nothing.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] session reference the hold must be
-- bound to, or '' for any
--
-- Returns  { HOLDING, fence, remainingMs }
--          { NOT_FOUND }
--@include holds
--@include label

--@include plain

local mode, tok, ref = ARGV[1], ARGV[2], ARGV[3]
local now = now_ms()
local fence, expires
if mode == 'write' then
  local h = plain_fields('w', 'wf', 'we') or redis.call('HMGET', KEYS[1], 'w', 'wf', 'we')
  if h[1] ~= tok then return { NOT_FOUND } end
  fence, expires = tonumber(h[2]), tonumber(h[3])
else
  local r = get_reader(tok)
  if not r then return { NOT_FOUND } end
  fence, expires = r.fence, tonumber(redis.call('ZSCORE', KEYS[2], tok) or '0')
end
if expires <= now or (ref ~= '' and bound_to(mode, tok) ~= ref) then return { NOT_FOUND } end
return { HOLDING, fence, expires - now }
