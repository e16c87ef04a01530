-- include/holds.lua — the state of one lock, shared by every script that changes it.
--
-- KEYS[1]  hash   writer fields: w (token), wf (fence), wc (hold count), wt (ttl ms of the latest
--                 grant or renew), we (expiry, Redis ms), wa / wac (id of the attempt that last
--                 changed the hold / its count before that attempt, for rollback.lua);
--                 one field per reader: r:<token> = "fence|count|ttl|attempt|countBeforeAttempt", and for
--                 a semaphore's hold "…|permits|slots" (slots: its slot numbers, "0,3"); a semaphore
--                 also keeps s:<slot> = token for each slot held, u (slots held, so permits in use)
--                 and n (its limit, fixed while anyone holds or waits)
-- KEYS[2]  zset   reader token -> expiry (Redis ms)
-- An exclusive lock (/locks) is a lock that only ever has a writer; a semaphore (/semaphores) is a
-- lock that only ever has readers, each holding as many of its n slots as it has permits. A slot is
-- held by one token at a time, like a lock, so in quorum mode a hold counts where a majority holds it
-- in the same slots (any two majorities share a node): never more than n permits at once, even when
-- different nodes missed different holds.
-- Expiry is decided here, from the Redis clock; the keys' own TTL always covers the longest live hold
-- and no more (refresh_ttl), so nothing outlives its holders.

-- wo / wb: the writer's owner and session (include/label.lua); wv: watched (include/lost.lua);
-- ws / wr / wx: an election leader's term start (Redis ms), revision and value (election_stamp.lua)
local WRITER_FIELDS = { 'w', 'wf', 'wc', 'wt', 'we', 'wa', 'wac', 'wo', 'wb', 'wv', 'ws', 'wr', 'wx' }

-- A reader's (or a semaphore holder's) hold as a table, or nil; `permits` and `slots` are nil for a
-- read hold.
local function get_reader(tok)
  local v = redis.call('HGET', KEYS[1], 'r:' .. tok)
  if not v then return nil end
  local f, c, t, a, ac, p, s = string.match(v, '^(%d+)|(%d+)|(%d+)|([^|]*)|(%d+)|?(%d*)|?([%d,]*)$')
  return {
    fence = tonumber(f), count = tonumber(c), ttl = tonumber(t), att = a, attc = tonumber(ac),
    permits = tonumber(p), slots = p ~= '' and s or nil,
  }
end

local function put_reader(tok, r, expires)
  local v = fmt(r.fence) .. '|' .. r.count .. '|' .. r.ttl .. '|' .. r.att .. '|' .. r.attc
  if r.permits then v = v .. '|' .. r.permits .. '|' .. r.slots end
  redis.call('HSET', KEYS[1], 'r:' .. tok, v)
  if expires then redis.call('ZADD', KEYS[2], expires, tok) end
end

-- The slots a semaphore's new hold of `permits` gets, as "0,3": those of `prefer` (e.g. "2", the
-- slots a release just freed) that are free, then the lowest free ones below `limit` — so that nodes
-- in the same state pick the same ones. The caller checked that enough are free (u + permits <=
-- limit). Bounded by the limit, in batches of 100 slots.
local function free_slots(permits, limit, prefer)
  local found, from, picked = {}, 0, {}
  for i in string.gmatch(prefer or '', '%d+') do
    if #found < permits and tonumber(i) < limit and redis.call('HEXISTS', KEYS[1], 's:' .. i) == 0 then
      found[#found + 1] = tonumber(i)
      picked[tonumber(i)] = true
    end
  end
  while #found < permits and from < limit do
    local to = math.min(from + 100, limit) - 1
    local fields = {}
    for i = from, to do fields[#fields + 1] = 's:' .. i end
    local holders = redis.call('HMGET', KEYS[1], unpack(fields))
    for i = from, to do
      if #found < permits and not holders[i - from + 1] and not picked[i] then found[#found + 1] = i end
    end
    from = to + 1
  end
  table.sort(found)
  return table.concat(found, ',')
end

-- Whether every slot of `slots` ("0,3") is free here or `tok`'s.
local function slots_open(tok, slots)
  for i in string.gmatch(slots, '%d+') do
    local holder = redis.call('HGET', KEYS[1], 's:' .. i)
    if holder and holder ~= tok then return false end
  end
  return true
end

-- `tok` takes these slots ("0,3"; free here), each counted in u.
local function occupy(tok, slots)
  for i in string.gmatch(slots, '%d+') do
    redis.call('HSET', KEYS[1], 's:' .. i, tok)
    redis.call('HINCRBY', KEYS[1], 'u', 1)
  end
end

-- `tok` gives back these slots (those still its own here).
local function vacate(tok, slots)
  for i in string.gmatch(slots, '%d+') do
    if redis.call('HGET', KEYS[1], 's:' .. i) == tok then
      redis.call('HDEL', KEYS[1], 's:' .. i)
      redis.call('HINCRBY', KEYS[1], 'u', -1)
    end
  end
end

-- Quorum mode: move `tok`'s hold `r` into the slots a majority of nodes named for it (`slots`), when
-- they are free here (or its own). Safe as a new grant of those slots would be: a slot is still one
-- token's at a time on this node. Returns false, changing nothing, when another token holds one.
local function move_slots(tok, r, slots)
  if r.slots == slots then return true end
  if not slots_open(tok, slots) then return false end
  vacate(tok, r.slots)
  occupy(tok, slots)
  r.slots = slots
  put_reader(tok, r, nil)
  return true
end

-- `tok` takes these slots (free_slots), and the semaphore keeps its limit while it has holds.
local function take_slots(tok, slots, limit)
  occupy(tok, slots)
  redis.call('HSET', KEYS[1], 'n', limit)
end

-- Forget a hold's entry (its zset entry is the caller's), giving back its slots if it has any.
local function forget_reader(tok)
  local r = get_reader(tok)
  if r and r.slots then vacate(tok, r.slots) end
  -- With its labels (include/label.lua).
  redis.call('HDEL', KEYS[1], 'r:' .. tok, 'o:' .. tok, 'b:' .. tok, 'v:' .. tok)
end

-- A reply's tail for a semaphore's hold: its slot numbers (nothing for other holds). Quorum mode
-- counts a hold only where a majority names the same slots.
local function with_slots(reply, r)
  if r and r.slots then
    for i in string.gmatch(r.slots, '%d+') do reply[#reply + 1] = tonumber(i) end
  end
  return reply
end

local function drop_reader(tok)
  forget_reader(tok)
  redis.call('ZREM', KEYS[2], tok)
end

-- Whether anyone holds the lock (after prune).
local function held()
  return redis.call('EXISTS', KEYS[1]) == 1
end

-- Drop the holds that lapsed. Bounded: a lock never has more than MAX_READERS readers, a semaphore
-- more holds than its limit. When nothing is left, neither is a semaphore's count or limit.
local function prune(now)
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  if #lapsed > 0 then
    for _, tok in ipairs(lapsed) do forget_reader(tok) end
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('HEXISTS', KEYS[1], 'w') == 0 then redis.call('DEL', KEYS[1]) end
  end
  local we = tonumber(redis.call('HGET', KEYS[1], 'we') or '0')
  if we > 0 and we <= now then redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS)) end
end

-- Latest expiry among the live holds (0 when none).
local function last_expiry()
  local last = tonumber(redis.call('HGET', KEYS[1], 'we') or '0')
  local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if top[2] and tonumber(top[2]) > last then last = tonumber(top[2]) end
  return last
end

local function refresh_ttl(now)
  local last = last_expiry()
  if last <= now then
    redis.call('DEL', KEYS[1], KEYS[2])
    return
  end
  redis.call('PEXPIRE', KEYS[1], last - now)
  redis.call('PEXPIRE', KEYS[2], last - now)
end

-- Undo what the attempt with id `attempt` did to `tok`'s hold in `mode` ('write', or 'read' / 'permit'
-- for a reader's or a semaphore holder's hold): a new hold is dropped (giving back its permits), a
-- re-grant gets its count back. A hold handed to a waiter carries the waiter id as its attempt (with
-- count 0 before it), so the same undo takes a hand-off back. Returns false when nothing of that
-- attempt is left (another attempt changed the hold since, or it is gone).
local function undo_attempt(mode, tok, attempt)
  if mode == 'write' then
    local h = redis.call('HMGET', KEYS[1], 'w', 'wa', 'wac')
    if h[1] ~= tok or h[2] ~= attempt then return false end
    if tonumber(h[3]) == 0 then
      redis.call('HDEL', KEYS[1], unpack(WRITER_FIELDS))
      -- A hold nobody was granted leaves no lock-delay (include/delay.lua).
      redis.call('HDEL', KEYS[8], 'w')
    else
      redis.call('HSET', KEYS[1], 'wc', h[3], 'wa', '')
    end
    return true
  end
  local r = get_reader(tok)
  if not r or r.att ~= attempt then return false end
  if r.attc == 0 then
    drop_reader(tok)
    redis.call('HDEL', KEYS[8], 'r:' .. tok)
  else
    r.count, r.att = r.attc, ''
    put_reader(tok, r, nil)
  end
  return true
end
