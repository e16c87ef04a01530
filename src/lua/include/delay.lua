-- include/delay.lua — lock-delay (an acquire's lockDelayMs): after a hold ends without its holder's
-- release (it expired, was force-released, or its session lapsed), nothing it freed is granted again
-- until its delay has passed: a write hold freed the whole lock, a read hold the writers' turn, a
-- semaphore's hold its permits. Include after holds, before queue.
--
-- KEYS[8]  hash  one entry per hold that has a delay: 'w' (the write hold) or 'r:<token>' (a read or
--                semaphore hold) -> "until|delay|permits": until = the hold's expiry + its delay
--                (Redis ms), delay in ms, permits a semaphore hold's ('' for any other)
-- The entry is written when the hold is granted, renewed or re-granted, so an expiry needs nobody to
-- notice it: the delay runs from the hold's expiry, not from when a script next looks, and a service
-- restart changes nothing. A release deletes it; a force-release moves it to now + delay. While its
-- hold is live an entry blocks nothing (the hold itself does). The key lives until its latest entry
-- ends.

local function delay_field(mode, tok)
  if mode == 'write' then return 'w' end
  return 'r:' .. tok
end

local function parse_delay(v)
  local u, d, p = string.match(v, '^(%d+)|(%d+)|(%d*)$')
  return tonumber(u or '0'), tonumber(d or '0'), tonumber(p or '')
end

local function put_delay(field, untl, delay, permits)
  redis.call('HSET', KEYS[8], field, fmt(untl) .. '|' .. delay .. '|' .. (permits or ''))
  -- The key lives until its latest entry ends (PTTL, not Redis 7's PEXPIRETIME: Redis 6.2 runs this too).
  local now = now_ms()
  local left = redis.call('PTTL', KEYS[8])
  if left < 0 or now + left < untl then redis.call('PEXPIRE', KEYS[8], fmt(untl - now)) end
end

-- `tok`'s hold in `mode` now expires at `expires`: note when its delay (ms; 0 for none) would end if it
-- lapsed then. `permits`: a semaphore hold's.
local function arm_delay(mode, tok, delay, expires, permits)
  if delay > 0 then
    put_delay(delay_field(mode, tok), expires + delay, delay, permits)
  else
    redis.call('HDEL', KEYS[8], delay_field(mode, tok))
  end
end

-- A renewal: the hold keeps the delay it has, counted from its new expiry.
local function rearm_delay(mode, tok, expires)
  local field = delay_field(mode, tok)
  local v = redis.call('HGET', KEYS[8], field)
  if not v then return end
  local _, delay, permits = parse_delay(v)
  put_delay(field, expires + delay, delay, permits)
end

-- The holder released its hold: no delay.
local function disarm_delay(mode, tok)
  redis.call('HDEL', KEYS[8], delay_field(mode, tok))
end

-- An operator took the hold away at `now`: its delay runs from now.
local function delay_from_now(mode, tok, now)
  local field = delay_field(mode, tok)
  local v = redis.call('HGET', KEYS[8], field)
  if not v then return end
  local _, delay, permits = parse_delay(v)
  put_delay(field, now + delay, delay, permits)
end

-- Whether the hold an entry belongs to is still live (its delay has not started).
local function delay_holder_live(field, now)
  if field == 'w' then return tonumber(redis.call('HGET', KEYS[1], 'we') or '0') > now end
  return tonumber(redis.call('ZSCORE', KEYS[2], string.sub(field, 3)) or '0') > now
end

-- What the running delays keep from a new hold in `mode` ('write', 'read', 'permit'): ms until the
-- last of them ends (0: none), the permits they keep (a semaphore's) and ms until the first of those
-- ends. A write hold is kept out by any delay, a read hold by a write hold's, a semaphore's hold by
-- the permits delayed (they count as in use). `tidy`: drop entries that ended (not from a script
-- that changes nothing). Bounded by the holds with a delay (a lock's readers, a semaphore's limit)
-- and those that ended within the longest delay.
local function delays_in_way(mode, now, tidy)
  if redis.call('EXISTS', KEYS[8]) == 0 then return 0, 0, 0 end
  local all = redis.call('HGETALL', KEYS[8])
  local last, permits, first = 0, 0, 0
  for i = 1, #all, 2 do
    local field = all[i]
    local untl, _, p = parse_delay(all[i + 1])
    if untl <= now then
      if tidy then redis.call('HDEL', KEYS[8], field) end
    elseif (mode ~= 'read' or field == 'w') and not delay_holder_live(field, now) then
      last = math.max(last, untl - now)
      if p then
        permits = permits + p
        if first == 0 or untl - now < first then first = untl - now end
      end
    end
  end
  return last, permits, first
end

-- ms until the last running lock-delay of any kind ends (0: none): what inspect shows.
local function delayed_for(now)
  return (delays_in_way('write', now, false))
end
