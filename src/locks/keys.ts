/**
 * Redis key names. Every key of one lock shares the hash tag `{<lock key>}`, so a script's keys always
 * live in one cluster slot. Lock keys cannot contain braces (the HTTP layer refuses them), and the
 * namespace sits outside the tag, so /locks/x, /rwlocks/x and /semaphores/x never touch the same
 * Redis key.
 */
export type Namespace = 'lock' | 'rw' | 'sem'

export interface LockKeys {
  /** hash: the holds (see src/lua/include/holds.lua); a semaphore's permits in use and limit too */
  holds: string
  /** zset: reader (or semaphore holder) token → expiry */
  readers: string
  /** fence counter */
  fence: string
  /** zset: requests waiting in line (see src/lua/include/queue.lua) */
  waiters: string
  /** zset: the waiting writers */
  waitingWriters: string
  /** hash: waiter id → mode and lease */
  waiterInfo: string
  /** All of them, in the order every script takes its KEYS. */
  all: readonly string[]
}

export function lockKeys(prefix: string, namespace: Namespace, key: string): LockKeys {
  const base = `${prefix}${namespace}:{${key}}`
  const keys = {
    holds: base,
    readers: `${base}:r`,
    fence: `${base}:fence`,
    waiters: `${base}:q`,
    waitingWriters: `${base}:qw`,
    waiterInfo: `${base}:qi`,
  }
  return { ...keys, all: [keys.holds, keys.readers, keys.fence, keys.waiters, keys.waitingWriters, keys.waiterInfo] }
}

/** How long a fence counter outlives the last grant that used it; after that, Redis TIME is the floor. */
export const FENCE_MEMORY_MS = 7 * 24 * 3600 * 1000
