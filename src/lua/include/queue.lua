-- include/queue.lua — the line of requests waiting for one lock (first come, first served).
--
-- KEYS[4]  zset  waiter id -> place in line (arrival order)
-- KEYS[5]  zset  the waiting writers only, same places (to find "a writer ahead of me" in O(log n))
-- KEYS[6]  hash  waiter id -> "mode|leaseExpiry (Redis ms)"; field '#' counts arrivals
-- A waiter id is "<replica id>.<n>"; a wake-up is PUBLISHed to "<wake prefix><replica id>" with the
-- waiter id as the message. The replica that parked the waiter renews its lease every second, so the
-- waiters of a replica that died leave the line when their lease lapses (within seconds).

local function waiter_mode(id)
  local v = redis.call('HGET', KEYS[6], id)
  if not v then return nil, 0 end
  local mode, lease = string.match(v, '^(%a+)|(%d+)$')
  return mode, tonumber(lease)
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
    local _, lease = waiter_mode(head)
    if lease > now then return dropped end
    leave_line(head)
    dropped = dropped + 1
  end
end

-- The line's keys outlive the leases of its waiters, and no more.
local function keep_line()
  for i = 4, 6 do redis.call('PEXPIRE', KEYS[i], WAITER_LEASE_MS * 2) end
end

local function join_line(id, mode, score, lease_until)
  if score == '' then score = redis.call('HINCRBY', KEYS[6], '#', 1) end
  redis.call('ZADD', KEYS[4], score, id)
  if mode == 'write' then redis.call('ZADD', KEYS[5], score, id) end
  redis.call('HSET', KEYS[6], id, mode .. '|' .. lease_until)
  keep_line()
end

-- May this request take a compatible lock now, given the line? A new arrival only when nobody waits;
-- a waiter when nobody it must respect is ahead: anyone, for a writer; a writer, for a reader.
local function may_pass(id, mode)
  if redis.call('EXISTS', KEYS[4]) == 0 then return true end
  if id == '' then return false end
  local place = redis.call('ZSCORE', KEYS[4], id)
  if not place then return false end
  if mode == 'write' then return redis.call('ZRANK', KEYS[4], id) == 0 end
  local first_writer = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  return first_writer[2] == nil or tonumber(first_writer[2]) >= tonumber(place)
end

-- ms until the waiter at the head of the line lapses unless renewed (a hint for how long others sleep).
local function head_lease_ms(now)
  local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if not head then return 0 end
  local _, lease = waiter_mode(head)
  return math.max(lease - now, 1)
end

local function wake(id)
  redis.call('PUBLISH', WAKE_PREFIX .. string.match(id, '^([^.]+)'), id)
end

-- Wake the waiter(s) at the front of the line: a writer at the head, or the run of readers at the
-- head. Unless `always`, only when they can proceed now (the lock is free for them); `always` is
-- for a front that just changed, so the new front learns how long to sleep. Nobody else is woken.
local function wake_front(now, always)
  if redis.call('EXISTS', KEYS[4]) == 0 then return end
  prune_line(now)
  local ids = redis.call('ZRANGE', KEYS[4], 0, 99)
  if #ids == 0 then return end
  local writer_holds = redis.call('HEXISTS', KEYS[1], 'w') == 1
  for i, id in ipairs(ids) do
    local mode = waiter_mode(id)
    if mode == 'write' then
      if i == 1 and (always or redis.call('EXISTS', KEYS[1]) == 0) then wake(id) end
      return
    end
    if writer_holds and not always then return end
    wake(id)
  end
end
