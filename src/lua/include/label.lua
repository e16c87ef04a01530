-- include/label.lua — a hold's labels, kept in the lock hash next to the hold (include after holds):
-- its owner (1–200 printable characters, not a secret: what inspect, listings and a 409 show) and
-- the session it is bound to (the session's reference, a hash of its id: never the id itself).
-- The writer's: fields wo, wb; a read or semaphore hold's: o:<token>, b:<token>. They go with the
-- hold (WRITER_FIELDS, forget_reader). '' leaves a label as it is (a re-acquire without owner keeps it).
local function label(mode, tok, owner, session)
  local o, b = 'o:' .. tok, 'b:' .. tok
  if mode == 'write' then o, b = 'wo', 'wb' end
  if owner ~= '' then redis.call('HSET', KEYS[1], o, owner) end
  if session ~= '' then redis.call('HSET', KEYS[1], b, session) end
end

-- A HELD refusal's tail (acquire.lua): the owner labels of the live holds in the way, the writer's
-- first, then the read or semaphore holds' by expiry; at most 10 (a 409 names them). Bounded: 10 holds looked at.
local function with_owners(reply, now)
  local fixed = #reply
  local h = redis.call('HMGET', KEYS[1], 'wo', 'we')
  if h[1] and tonumber(h[2] or '0') > now then reply[#reply + 1] = h[1] end
  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'LIMIT', 0, 10)) do
    if #reply - fixed >= 10 then break end
    local owner = redis.call('HGET', KEYS[1], 'o:' .. tok)
    if owner then reply[#reply + 1] = owner end
  end
  return reply
end

-- The session reference a hold of `tok` in `mode` is bound to ('' when none).
local function bound_to(mode, tok)
  if mode == 'write' then return redis.call('HGET', KEYS[1], 'wb') or '' end
  return redis.call('HGET', KEYS[1], 'b:' .. tok) or ''
end
