-- include/lock_keys.lua — a lock script is sent one key, the lock's hash; its other keys are named here
-- from it, as src/locks/keys.ts names them (test/locks/lock-keys.test.ts keeps the two equal). Each
-- argument costs Redis about a quarter of a microsecond per call, more than naming a key here.
-- They all share the hash's {tag}, so a Redis Cluster serves them from the same slot.
-- KEYS[1] hash, [2] readers, [3] fence counter, [4] line, [5] waiting writers, [6] waiters' leases,
-- [7] why watched holds went, [8] lock-delays, [9] an election's hash (election scripts only).
-- A fast path comes before this and names what it uses itself (src/redis/scripts.ts puts this after it).
local KEYS = {
  KEYS[1], KEYS[1] .. ':r', KEYS[1] .. ':fence', KEYS[1] .. ':q', KEYS[1] .. ':qw', KEYS[1] .. ':qi', KEYS[1] .. ':gone',
  KEYS[1] .. ':delay', KEYS[1] .. ':e',
}
