-- include/clock.lua — the Redis clock and whole-number formatting, which every script's general path
-- may need before anything else. src/redis/scripts.ts puts this right after include/settings.lua,
-- or after a fast path (which defines nothing: defining functions is part of every call's cost).

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
