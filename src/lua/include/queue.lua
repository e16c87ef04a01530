-- include/queue.lua — the line of requests waiting for one lock (first come, first served), and the
-- hand-off that gives a freed lock straight to the front of the line. Include after holds, fence and
-- delay.
--
-- KEYS[4]  zset  waiter id -> place in line (arrival order)
-- KEYS[5]  zset  the waiting writers only, same places (to find "a writer ahead of me" in O(log n))
-- KEYS[6]  hash  waiter id -> "mode|leaseExpiry (Redis ms)|token|ttlMs", and for a semaphore's waiter
--                "…|permits"; with a lock-delay (include/delay.lua) "…|permits or ''|delayMs";
--                field '#' counts arrivals, field 'n' is a semaphore's limit while it has waiters
-- A waiter id is "<replica id>.<n>". Pushes go to channel "<wake prefix><replica id>" (or into the
-- reply, when the script's caller is that replica: push, below):
--   "<id>"                      look again (the front changed, or your turn came but not a hand-off)
--   "<id>|<fence>|<Redis µs>"   handed over: the lock is yours (hold of your token, your ttl, that
--                               fence, its expiry counted from that Redis time); a semaphore's:
--                               "…|<slots>" (your permits, in those slots, e.g. "0,3")
-- The replica that parked the waiter renews its lease every second, so the waiters of a replica that
-- died leave the line when their lease lapses (within seconds). A hand-off goes only to a waiter
-- renewed lately, and is not made when its push reaches no subscriber (that replica is gone: the
-- waiter leaves the line at once).

-- A waiter's entry read; nil when it is not an entry of ours (the waiter counts as gone).
local function parse_waiter(v)
  local mode, lease, tok, ttl, permits, delay = string.match(v, WAITER_ENTRY)
  if not mode then return nil end
  local w = { mode = mode, lease = tonumber(lease), tok = tok, ttl = tonumber(ttl), permits = tonumber(permits) }
  w.delay = tonumber(delay) or 0
  return w
end

-- A waiter's entry written.
local function waiter_text(w)
  local v = w.mode .. '|' .. w.lease .. '|' .. w.tok .. '|' .. w.ttl
  if w.permits then v = v .. '|' .. w.permits end
  if (w.delay or 0) > 0 then v = v .. (w.permits and '|' or '||') .. w.delay end
  return v
end

local function waiter_info(id)
  local v = redis.call('HGET', KEYS[6], id)
  return v and parse_waiter(v) or nil
end

local function put_waiter(id, w)
  redis.call('HSET', KEYS[6], id, waiter_text(w))
end

-- A semaphore's limit while anyone holds or waits; 0 when nobody does (the next acquire sets it).
local function current_limit()
  return tonumber(redis.call('HGET', KEYS[1], 'n') or redis.call('HGET', KEYS[6], 'n') or '0')
end

local function leave_line(id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
  redis.call('HDEL', KEYS[6], id)
  if redis.call('ZCARD', KEYS[4]) == 0 then redis.call('DEL', KEYS[4], KEYS[5], KEYS[6]) end
end

-- Drop waiters at the front whose lease lapsed; returns how many. Bounded by MAX_WAITERS.
local function prune_line(now)
  local dropped = 0
  while true do
    local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
    if not head then return dropped end
    local w = waiter_info(head)
    if w and w.lease > now then return dropped end
    leave_line(head)
    dropped = dropped + 1
  end
end

-- The line's keys outlive the leases of its waiters, and no more.
local function keep_line()
  for i = 4, 6 do redis.call('PEXPIRE', KEYS[i], WAITER_LEASE_MS * 2) end
end

-- `limit`: a semaphore's limit, kept with the line.
local function join_line(id, score, w, limit)
  if score == '' then score = redis.call('HINCRBY', KEYS[6], '#', 1) end
  redis.call('ZADD', KEYS[4], score, id)
  if w.mode == 'write' then redis.call('ZADD', KEYS[5], score, id) end
  if limit then redis.call('HSET', KEYS[6], 'n', limit) end
  put_waiter(id, w)
  keep_line()
end

-- May this request take a compatible lock now, given the line? A new arrival only when nobody waits;
-- a waiter when nobody it must respect is ahead: anyone, for a writer or a semaphore's waiter (a
-- head that needs more permits than are free blocks those behind it); a writer, for a reader.
local function may_pass(id, mode)
  if redis.call('EXISTS', KEYS[4]) == 0 then return true end
  if id == '' then return false end
  local place = redis.call('ZSCORE', KEYS[4], id)
  if not place then return false end
  if mode ~= 'read' then return redis.call('ZRANK', KEYS[4], id) == 0 end
  local first_writer = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  return first_writer[2] == nil or tonumber(first_writer[2]) >= tonumber(place)
end

-- ms until the waiter at the head of the line lapses unless renewed (a hint for how long others sleep).
local function head_lease_ms(now)
  local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if not head then return 0 end
  local w = waiter_info(head)
  return math.max((w and w.lease or now) - now, 1)
end

-- A script that its caller told its replica id (release.lua) answers that replica's pushes in its
-- reply instead (`own_pushes`, same messages): the caller is alive and reads the reply, so no PUBLISH,
-- and the push counts as heard. If the reply is lost, the caller wakes its waiters of this lock.
local own_replica, own_pushes = nil, {}

local function push(id, message)
  local replica = string.match(id, '^([^.]+)')
  if own_replica and replica == own_replica then
    own_pushes[#own_pushes + 1] = message
    return 1
  end
  return redis.call('PUBLISH', WAKE_PREFIX .. replica, message)
end

-- `reply`, followed by the pushes for the caller's replica (see push).
local function with_own_pushes(reply)
  for _, message in ipairs(own_pushes) do reply[#reply + 1] = message end
  return reply
end

-- Give the free lock to waiter `id` (mode, token, ttl and permits of its request; attempt id = its
-- waiter id, so that leave.lua can take back a hand-off its waiter no longer wants, and acquire.lua
-- can claim it), and push it the grant. Returns false when no replica received the push (as far as
-- PUBLISH can tell: WAKE_COUNTS_RECEIVERS): then nothing is handed over and the unreachable waiter
-- leaves the line. `limit`: a semaphore's; `prefer`:
-- the slots to give a semaphore's waiter first (include/holds.lua free_slots).
local function hand_off(id, w, hint, limit, prefer)
  local clock = now_us()
  local fence = next_fence(KEYS[3], clock, hint)
  leave_line(id)
  -- A semaphore's waiter is told its slots too.
  local slots = w.permits and free_slots(w.permits, limit, prefer)
  local heard = push(id, id .. '|' .. fmt(fence) .. '|' .. fmt(clock) .. (slots and '|' .. slots or ''))
  -- (In a Redis Cluster the count is no evidence either way: the hold is handed over regardless, as
  -- the push may well have reached the waiter; settings.lua WAKE_COUNTS_RECEIVERS.)
  if heard == 0 and WAKE_COUNTS_RECEIVERS then return false end
  local expires = math.floor(clock / 1000) + w.ttl
  if w.mode == 'write' then
    redis.call('HSET', KEYS[1], new_writer(w.tok, fmt(fence), w.ttl, expires, id))
  else
    if slots then take_slots(w.tok, slots, limit) end
    put_reader(w.tok, { fence = fence, count = 1, ttl = w.ttl, att = id, attc = 0, permits = w.permits, slots = slots }, expires)
  end
  arm_delay(w.mode, w.tok, w.delay, expires, w.permits)
  return true
end

-- Whether the waiter's replica renewed its place lately (it does so every second; see the header):
-- only such a waiter (and one whose entry names its token and ttl) is handed the lock. One that missed
-- a renewal is woken instead, and takes the lock itself if it is alive, so a replica cut off from Redis without closing its connections is
-- not handed a lock it cannot use.
local function renewed_lately(w, now)
  return w.lease - now >= WAITER_LEASE_MS - RENEWED_WITHIN_MS
end

-- Let the front of the line proceed: a writer at the head, the run of readers at the head, or the run
-- of a semaphore's waiters at the head whose permits fit (in order: the first that does not fit
-- stops the run), gets the lock handed over when it is free for them. `always`: the front just changed, so a front that
-- cannot proceed yet is woken to learn how long to sleep. Nobody else is woken. `hint`: fence hint
-- (include/fence.lua), '0' for none. `freed`: the slots of a semaphore's hold just released, handed on
-- first (nodes that agreed on the released hold's slots then agree on its successor's). Bounded by
-- the line's length (MAX_WAITERS).
local function wake_front(now, always, hint, freed)
  if redis.call('EXISTS', KEYS[4]) == 0 then return end
  prune_line(now)
  local pos, handed, limit = 0, false, nil
  while true do
    local id = redis.call('ZRANGE', KEYS[4], pos, pos)[1]
    if not id then break end
    local w = waiter_info(id)
    if not w then
      leave_line(id)
    elseif w.mode ~= 'read' then
      -- A writer, or a semaphore's waiter: only at the head (those handed over before it left the
      -- line), and only when what it asks for is free: nobody holds the lock, or its permits fit.
      if pos > 0 then break end
      local free
      if w.mode == 'write' then
        free = redis.call('EXISTS', KEYS[1]) == 0 and delays_in_way('write', now, false) == 0
      else
        -- Read before a hand-off empties the line (and takes its copy of the limit along).
        limit = limit or current_limit()
        local _, delayed = delays_in_way('permit', now, false)
        free = w.permits <= limit - tonumber(redis.call('HGET', KEYS[1], 'u') or '0') - delayed
      end
      if not free then
        if always then push(id, id) end
        break
      end
      if not renewed_lately(w, now) then
        push(id, id)
        break
      end
      if hand_off(id, w, hint, limit, freed) then
        handed = true
        -- A writer holds alone; after a semaphore's waiter, the next may fit too.
        if w.mode == 'write' then break end
      end
      -- Otherwise it left the line (unreachable): the new head is next.
    elseif redis.call('HEXISTS', KEYS[1], 'w') == 1 or delays_in_way('read', now, false) > 0 then
      if not always then break end
      push(id, id)
      pos = pos + 1
    elseif redis.call('ZCARD', KEYS[2]) >= MAX_READERS or not renewed_lately(w, now) then
      -- It looks again itself (and learns of a full lock as a 429).
      push(id, id)
      pos = pos + 1
    elseif hand_off(id, w, hint) then
      handed = true
    end
  end
  if handed then refresh_ttl(now) end
end
