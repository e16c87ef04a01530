-- include/settings.lua — this service's settings, written into every script's text when the scripts
-- are loaded (src/redis/scripts.ts), so that no call has to send them.
-- How long a fence counter outlives its last use (FENCE_RETENTION_MS); a string, as Redis takes it (a Lua
-- number passed to redis.call is formatted on every call, which costs more than the command it is passed to).
local FENCE_RETENTION_MS = '{{FENCE_RETENTION_MS}}'
-- The furthest ahead of this node's clock the service's fence hint may take a fence (µs): half the
-- retention, so that a counter outlives the node's clock reaching every fence it stored (include/fence.lua).
local FENCE_LEAD_MAX_US = {{FENCE_RETENTION_MS}} * 500
local MAX_READERS = {{MAX_READERS}}           -- most read holds one lock may have
local MAX_WAITERS = {{MAX_WAITERS}}           -- most waiters one lock may have
local WAITER_LEASE_MS = {{WAITER_LEASE_MS}}   -- a waiter's place lapses unless renewed within this
-- A waiter renewed within this long (ms) is alive, and may be handed a lock (include/queue.lua).
local RENEWED_WITHIN_MS = 1500
local WAKE_PREFIX = '{{WAKE_PREFIX}}'         -- wake-ups go to WAKE_PREFIX .. <replica id>
local GONE_MEMORY_MS = {{GONE_MEMORY_MS}}     -- how long why a watched hold went is kept (include/lost.lua)
local LOST_CHANNEL = '{{LOST_CHANNEL}}'       -- where a watched hold's or a session's end is pushed
-- 1: PUBLISH's count says whether the waiter's replica heard a push (one Redis, Sentinel). 0 in a Redis
-- Cluster: there it counts only the publishing node's own subscribers, while the cluster bus delivers
-- the push to a replica subscribed on any other node, so a 0 does not mean "nobody heard it".
local WAKE_COUNTS_RECEIVERS = {{WAKE_COUNTS_RECEIVERS}} == 1
-- A plain write hold, the lock's key as a string (include/plain.lua): fence, token, ttl ms, attempt id.
local PLAIN_HOLD = '^(%d+)|([^|]*)|(%d+)|(.*)$'
local PLAIN_HOLD_TOKEN = '^%d+|([^|]*)|'   -- its token alone
-- A waiter's entry in the line (include/queue.lua): mode, lease expiry, token, ttl ms, permits, lock-delay ms.
local WAITER_ENTRY = '^(%a+)|(%d+)|([^|]*)|(%d+)|?(%d*)|?(%d*)$'
