-- acquire.lua — take a hold (read, write, or a semaphore's permits), re-grant it to its current
-- holder, or say why not; a waiting request takes (or keeps) its place in line.
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua), KEYS[7] unused here, KEYS[8] lock-delays (include/delay.lua)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] ttl ms   ARGV[4] attempt id
-- ARGV[5] fence hint, µs (include/fence.lua)   ARGV[6] reentrant: '1', or '' / '0'
-- ARGV[7] waiter id, '' for a request that does not wait   ARGV[8] its place in line, '' to take the next one
-- ARGV[9] '1': the request gave no TTL, so a re-grant keeps the TTL of the hold's latest grant or
--         renew (as renew.lua does) and ARGV[3] (the default) is for a new hold only
-- ARGV[10] 'permit' only: the permits asked for   ARGV[11] 'permit' only: the semaphore's limit
-- ARGV[12] 'permit' only, quorum mode: '' (a first round: the lowest free slots), or the slots most
--          nodes named for this attempt ("0,3"): a hold nobody was told of yet (this attempt's new
--          hold, or one handed to this waiter) moves there, or is made there, when they are free
--          here; else it is refused as HELD. A hold already answered never moves (its slots back
--          its validity): it must already be in those slots
-- ARGV[13] the hold's owner label, ''   ARGV[14] the reference of the session it is bound to, ''
--          (include/label.lua; set on every grant, '' keeps what the hold has)
-- ARGV[15] the hold's lock-delay, ms ('' or '0': none; include/delay.lua), set on every grant
-- Empty arguments at the end may be left out (a plain request sends five).
-- Settings: include/settings.lua
--
-- Returns  { GRANTED, fence, holdCount, ttlMs }
--                                           a new hold, or a waiter claiming the hold handed
--                                           to it (include/queue.lua hand_off; TTL restarts now)
--          { REGRANTED, fence, holdCount, ttlMs }
--                                           this token already held it in this mode; TTL
--                                           reset (to ttlMs, the kept one with ARGV[9]), count +1
--                                           only when reentrant
--                                           (a semaphore's hold, either: followed by its slots)
--          { HELD, retryAfterMs, wakeInMs, redisUs, owner… }
--                                           a conflicting hold, or others ahead in line.
--                                           wakeInMs: when a waiter at the front should try again
--                                           (the conflicting holds lapse); 0: wait for a push.
--                                           redisUs: this node's clock (µs), to date a later hand-off (0 when not waiting);
--                                           owner…: the owner labels of the holds (include/label.lua)
--          { DELAYED, retryAfterMs, wakeInMs, redisUs }
--                                           nothing in the way holds it, but the lock-delay of a
--                                           hold that ended unreleased runs for retryAfterMs more
--                                           (include/delay.lua); wakeInMs and redisUs as for HELD
--          { UPGRADE }                      a write asked for by a token holding a read
--          { TOO_MANY_READERS }
--          { TOO_MANY_WAITERS }
--          { LIMIT_MISMATCH, limit }        the semaphore has holds or waiters, and
--                                           this limit (fixed until nobody holds or waits)
--          { PERMITS_MISMATCH, permits }    this token holds these permits

local mode, tok, ttl, att, hint = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local wid = ARGV[7] or ''

-- The fast path: a write hold (an exclusive lock's) on a lock with nothing on it — no hash, readers,
-- line or lock-delays; nothing to prune, nobody to respect — is made here as a plain hold
-- (include/plain.lua: one SET, and the fence counter's); and a request that does not wait, finding
-- only another token's live write hold (plain, or alone in the hash), is refused with what the
-- general path would answer; a waiting request that finds one alone in the hash, with a line whose
-- head's lease holds, joins the line at its end (a hot key's every join) and is refused as the general
-- path would refuse it. Anything else falls through to the general path. It defines no function
-- and names no key it does not use: each definition is work on every call (src/redis/scripts.ts puts
-- the clock's functions and the lock's other keys after it). test/locks/fast-path.test.ts runs the same
-- calls with and without the lines between the fast-path markers and compares replies and lock states.
--@fast-path
-- Arguments after the ninth (a semaphore's, labels, a session, a lock-delay) send the call to the general path.
local plain = mode == 'write'
for i = 10, #ARGV do
  if ARGV[i] ~= '' then plain = false end
end
if plain then
  local lock = KEYS[1]
  local present = redis.call('EXISTS', lock, lock .. ':r', lock .. ':q', lock .. ':delay')
  if present == 0 then
    local time = redis.call('TIME')
    local clock = tonumber(time[1]) * 1000000 + tonumber(time[2])
    -- include/fence.lua's next_fence, keeping the hint's own text when it is the fence (most grants):
    -- turning a Lua number into text costs Redis about half a microsecond.
    local counter = lock .. ':fence'
    local fence = math.max(clock, math.min(tonumber(hint), clock + FENCE_LEAD_MAX_US))
    local text = fence == tonumber(hint) and hint or string.format('%.0f', fence)
    local was = redis.call('SET', counter, text, 'PX', FENCE_RETENTION_MS, 'GET')
    local last = was and tonumber(string.match(was, '^%d+')) or 0
    if last + 1 > fence then
      fence = last + 1
      text = string.format('%.0f', fence)
      redis.call('SET', counter, text, 'PX', FENCE_RETENTION_MS)
    end
    redis.call('SET', lock, text .. '|' .. tok .. '|' .. ARGV[3] .. '|' .. att, 'PX', ARGV[3])
    return { GRANTED, fence, 1, ttl }
  end
  if wid ~= '' and present == 2 then
    -- A waiter joining the line behind another token's live write hold, alone in its hash (a hot key's
    -- every join): the line (it has a head) and the hash are the two keys present, the head's lease
    -- holds, and this waiter is not in line yet. It takes the next place, as join_line makes it.
    local line, writers, entries = lock .. ':q', lock .. ':qw', lock .. ':qi'
    local head = redis.call('ZRANGE', line, 0, 0)[1]
    if
      head
      and redis.call('TYPE', lock).ok == 'hash'
      and redis.call('HLEN', lock) == 7
      and not redis.call('ZSCORE', line, wid)
      and redis.call('ZCARD', line) < MAX_WAITERS
    then
      local h = redis.call('HMGET', lock, 'w', 'we')
      local time = redis.call('TIME')
      local clock = tonumber(time[1]) * 1000000 + tonumber(time[2])
      local now = math.floor(clock / 1000)
      local _, lease = string.match(redis.call('HGET', entries, head) or '', WAITER_ENTRY)
      local conflict = tonumber(h[2] or '0') - now
      if h[1] ~= tok and conflict > 0 and tonumber(lease or '0') > now then
        local place = ARGV[8] or ''
        if place == '' then place = redis.call('HINCRBY', entries, '#', 1) end
        redis.call('ZADD', line, place, wid)
        redis.call('ZADD', writers, place, wid)
        redis.call('HSET', entries, wid, mode .. '|' .. (now + WAITER_LEASE_MS) .. '|' .. tok .. '|' .. ttl)
        redis.call('PEXPIRE', line, WAITER_LEASE_MS * 2)
        redis.call('PEXPIRE', writers, WAITER_LEASE_MS * 2)
        redis.call('PEXPIRE', entries, WAITER_LEASE_MS * 2)
        local front = redis.call('ZRANK', line, wid) == 0
        return { HELD, conflict, front and conflict or 0, clock }
      end
    end
  end
  if wid == '' then
    local form = redis.call('TYPE', lock).ok
    if form == 'string' then
      -- A plain hold, so nothing else is on the lock.
      local holder = string.match(redis.call('GET', lock), PLAIN_HOLD_TOKEN)
      local left = redis.call('PTTL', lock)
      if holder ~= tok and left > 0 then return { HELD, left, left, 0 } end
    elseif present == 1 and form == 'hash' then
      -- The one key present is the hash: no readers' zset, no line, no delays.
      local h = redis.call('HMGET', lock, 'w', 'we', 'r:' .. tok, 'wo')
      if h[1] and h[1] ~= tok and not h[3] then
        local time = redis.call('TIME')
        local clock = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local left = tonumber(h[2] or '0') - math.floor(clock / 1000)
        -- As the general path's refusal: with the writer's owner label, if it has one (include/label.lua).
        if left > 0 then return { HELD, left, left, 0, h[4] or nil } end
      end
    end
  end
end
--@end-fast-path

--@include fence
--@include plain
--@include holds
--@include delay
--@include queue
--@include label

local keep_ttl, reentrant, place = ARGV[9] == '1', ARGV[6] == '1', ARGV[8] or ''
local permits, limit, proposed = tonumber(ARGV[10] or ''), tonumber(ARGV[11] or ''), ARGV[12] or ''
local delay = tonumber(ARGV[15] or '') or 0
local clock = now_us()
local now = math.floor(clock / 1000)
promote(now)
prune(now)
if prune_line(now) > 0 then wake_front(now, true, hint) end

if mode == 'permit' then
  local current = current_limit()
  if current > 0 and current ~= limit then return { LIMIT_MISMATCH, current } end
end

local function granted(code, fence, count)
  if wid ~= '' and redis.call('ZSCORE', KEYS[4], wid) then leave_line(wid) end
  label(mode, tok, ARGV[13] or '', ARGV[14] or '')
  arm_delay(mode, tok, delay, now + ttl, permits)
  refresh_ttl(now)
  -- Readers behind a reader granted from the line may pass too.
  wake_front(now, false, hint)
  -- A semaphore's hold: followed by its slots.
  return with_slots({ code, fence, count, ttl }, mode == 'permit' and get_reader(tok))
end

-- `delayed`: what is in the way is a lock-delay (include/delay.lua), for conflict_ms more.
local function refused(conflict_ms, delayed)
  if wid ~= '' then
    local me = { mode = mode, lease = now + WAITER_LEASE_MS, tok = tok, ttl = ttl, permits = permits, delay = delay }
    if redis.call('ZSCORE', KEYS[4], wid) then
      put_waiter(wid, me)
      keep_line()
    elseif redis.call('ZCARD', KEYS[4]) >= MAX_WAITERS then
      return { TOO_MANY_WAITERS }
    else
      join_line(wid, place, me, limit)
    end
  end
  local front = may_pass(wid, mode)
  -- The clock dates a later hand-off: a waiter's alone.
  local at = wid ~= '' and clock or 0
  if delayed then return { DELAYED, conflict_ms, front and conflict_ms or 0, at } end
  if conflict_ms > 0 then
    return with_owners({ HELD, conflict_ms, front and conflict_ms or 0, at }, now)
  end
  return with_owners({ HELD, head_lease_ms(now), 0, at }, now)
end

local w = redis.call('HGET', KEYS[1], 'w')

if mode == 'write' then
  if w == tok then
    local h = redis.call('HMGET', KEYS[1], 'wf', 'wc', 'wa', 'wt')
    if wid ~= '' and h[3] == wid then
      -- Handed to this waiter while it was asking: this attempt takes it up as its grant.
      redis.call('HSET', KEYS[1], 'wt', ttl, 'we', now + ttl, 'wa', att, 'wac', 0)
      return granted(GRANTED, tonumber(h[1]), tonumber(h[2]))
    end
    if keep_ttl then ttl = tonumber(h[4]) or ttl end
    local count = tonumber(h[2])
    local before = count
    if reentrant then count = count + 1 end
    redis.call('HSET', KEYS[1], 'wc', count, 'wt', ttl, 'we', now + ttl, 'wa', att, 'wac', before)
    return granted(REGRANTED, tonumber(h[1]), count)
  end
  if redis.call('HEXISTS', KEYS[1], 'r:' .. tok) == 1 then return { UPGRADE } end
  if w then return refused(tonumber(redis.call('HGET', KEYS[1], 'we')) - now) end
  local last_reader = last_expiry()
  if last_reader > now then return refused(last_reader - now) end
  local delayed = delays_in_way(mode, now, true)
  if delayed > 0 then return refused(delayed, true) end
  if not may_pass(wid, mode) then return refused(0) end
  local fence = next_fence(KEYS[3], clock, hint)
  redis.call('HSET', KEYS[1], new_writer(tok, fmt(fence), ttl, now + ttl, att))
  return granted(GRANTED, fence, 1)
end

local r = get_reader(tok)
if r and r.permits ~= permits then return { PERMITS_MISMATCH, r.permits } end
-- Until the hold that lapses first is gone (the time to look again, and a hint to retry).
local function full()
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return refused(first[2] and tonumber(first[2]) - now or 0)
end
-- Whether a hold nobody was told of may move into the proposed slots (or an answered one is in them).
local function in_proposed(fresh)
  if fresh then return move_slots(tok, r, proposed) end
  return r.slots == proposed
end
if r and proposed ~= '' and r.att == att then
  -- The second round of this attempt, which made (count before it 0), or re-granted, this hold.
  if not in_proposed(r.attc == 0) then return full() end
  return granted(r.attc == 0 and GRANTED or REGRANTED, r.fence, r.count)
end
if r and proposed ~= '' and not in_proposed(wid ~= '' and r.att == wid) then return full() end
if r and wid ~= '' and r.att == wid then
  r.ttl, r.att, r.attc = ttl, att, 0
  put_reader(tok, r, now + ttl)
  return granted(GRANTED, r.fence, r.count)
end
if r then
  if keep_ttl then ttl = r.ttl end
  local before = r.count
  if reentrant then r.count = r.count + 1 end
  r.ttl, r.att, r.attc = ttl, att, before
  put_reader(tok, r, now + ttl)
  return granted(REGRANTED, r.fence, r.count)
end
if mode == 'permit' then
  local in_use = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
  if in_use + permits > limit then return full() end
  -- Permits whose hold lapsed unreleased stay out of reach until their delay ends.
  local _, delayed, first = delays_in_way(mode, now, true)
  if in_use + delayed + permits > limit then return refused(first, true) end
  if proposed ~= '' and not slots_open(tok, proposed) then return full() end
  if not may_pass(wid, mode) then return refused(0) end
  local fence = next_fence(KEYS[3], clock, hint)
  local slots = proposed ~= '' and proposed or free_slots(permits, limit)
  take_slots(tok, slots, limit)
  put_reader(tok, { fence = fence, count = 1, ttl = ttl, att = att, attc = 0, permits = permits, slots = slots }, now + ttl)
  return granted(GRANTED, fence, 1)
end
-- A writer may take a read hold with its own token (then release the write: a downgrade, no gap).
if w and w ~= tok then return refused(tonumber(redis.call('HGET', KEYS[1], 'we')) - now) end
if w ~= tok then
  local delayed = delays_in_way(mode, now, true)
  if delayed > 0 then return refused(delayed, true) end
  if not may_pass(wid, mode) then return refused(0) end
end
if redis.call('ZCARD', KEYS[2]) >= MAX_READERS then return { TOO_MANY_READERS } end
local fence = next_fence(KEYS[3], clock, hint)
put_reader(tok, { fence = fence, count = 1, ttl = ttl, att = att, attc = 0 }, now + ttl)
return granted(GRANTED, fence, 1)
