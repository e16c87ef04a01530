import { createHash } from 'node:crypto'

/**
 * Redis key names. Every key of one lock shares the hash tag `{<lock key>}`, so a script's keys always
 * live in one cluster slot. Lock keys cannot contain braces (the HTTP layer refuses them), and the
 * namespace sits outside the tag, so /locks/x, /rwlocks/x and /semaphores/x never touch the same
 * Redis key.
 */
export type Namespace = 'lock' | 'rw' | 'sem' | 'elect'

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
  /** hash: token → "reason|at" of a watched hold that went (include/lost.lua), kept GONE_MEMORY_MS */
  gone: string
  /** hash: the lock-delay of each hold that has one (include/delay.lua), kept until the last ends */
  delays: string
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
  const gone = `${holds}:gone`
  const delays = `${holds}:delay`
  return {
    holds,
    readers,
    fence,
    waiters,
    waitingWriters,
    waiterInfo,
    gone,
    delays,
    all: [holds, readers, fence, waiters, waitingWriters, waiterInfo, gone, delays],
  }
}

/**
 * An election's keys: its hold's (namespace `elect`; the leader's hold is a write hold whose
 * fence is the term), and `meta`, a hash under the same tag that outlives the holds as the fence
 * counter does: `t`, the terms begun (src/lua/election_stamp.lua).
 */
export interface ElectionKeys {
  hold: LockKeys
  meta: string
  /** The hold's keys (LockKeys.all), then meta: what the election scripts take. */
  all: readonly string[]
}

export function electionKeys(prefix: string, name: string): ElectionKeys {
  const hold = lockKeys(prefix, 'elect', name)
  const meta = `${hold.holds}:e`
  return { hold, meta, all: [...hold.all, meta] }
}

/** How long the reason a watched hold went is kept for a watcher that asks just after (include/lost.lua). */
export const GONE_MEMORY_MS = 10_000

/** How long a fence counter outlives the last grant that used it; after that, Redis TIME is the floor. */
export const FENCE_MEMORY_MS = 7 * 24 * 3600 * 1000

/**
 * A session's keys (src/lua/include/session.lua), under the session's own hash tag: its reference, a
 * hash of its id (the id, a secret, is never stored). A session never shares a script with a lock:
 * keepalive runs one script on these keys and one per bound hold on that hold's lock keys.
 */
export interface SessionKeys {
  /** hash: ttl, exp, owner, by */
  session: string
  /** hash: "<mode>|<token>|<lock key>" of each bound hold */
  holds: string
  all: readonly string[]
}

/** The live sessions of one API key (key_sessions.lua), under a tag of its own: a hash of the key's name. */
export function apiKeySessionsKey(prefix: string, name: string): string {
  return `${prefix}sessions-by:{${createHash('sha256').update(name).digest('base64url').slice(0, 22)}}`
}

/** Every live session of the service (sessions_index.lua), for the sessions gauge and expiry count. */
export function sessionsIndexKey(prefix: string): string {
  return `${prefix}sessions:{index}`
}

export function sessionKeys(prefix: string, ref: string): SessionKeys {
  const session = `${prefix}sess:{${ref}}`
  const holds = `${session}:h`
  return { session, holds, all: [session, holds] }
}
