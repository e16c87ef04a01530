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
  const holds = `${prefix}${namespace}:{${key}}`
  const readers = `${holds}:r`
  const fence = `${holds}:fence`
  const waiters = `${holds}:q`
  const waitingWriters = `${holds}:qw`
  const waiterInfo = `${holds}:qi`
  return { holds, readers, fence, waiters, waitingWriters, waiterInfo, all: [holds, readers, fence, waiters, waitingWriters, waiterInfo] }
}

/** How long a fence counter outlives the last grant that used it; after that, Redis TIME is the floor. */
export const FENCE_MEMORY_MS = 7 * 24 * 3600 * 1000
