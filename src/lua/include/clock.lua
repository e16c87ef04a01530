-- include/clock.lua — the Redis clock and whole-number formatting, which every script may need
-- before anything else (a fast path at the top of a script runs before the other includes are
-- even defined: defining their functions is part of every call's cost). src/redis/scripts.ts puts
-- this right after include/settings.lua in every script.

-- The Redis clock in microseconds.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function now_ms()
  return math.floor(now_us() / 1000)
end

-- A whole number as Redis should store it (no exponent).
local function fmt(n)
  return string.format('%.0f', n)
end
