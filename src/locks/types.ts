import type { GrantBody, HoldMode, ReleaseBody } from '../contract/wire.js'
import type { Kind } from '../errors.js'
import type { Namespace } from './keys.js'

/** `exclusive`: /locks; `read` / `write`: /rwlocks; `permit`: /semaphores; `leader`: /elections. */
export type LockMode = HoldMode

/** The kind of hold the scripts keep (their `mode` argument). */
export type HoldKind = 'read' | 'write' | 'permit'

/**
 * An exclusive lock is a lock that only ever has a writer, a semaphore one that only ever has
 * holders of permits (weighted readers, at most its limit in all), an election's leadership a write
 * hold whose fence is the term: each in a namespace of its own.
 */
export function storageOf(mode: LockMode): { readonly namespace: Namespace; readonly hold: HoldKind } {
  return STORAGE[mode]
}

const STORAGE: Readonly<Record<LockMode, { readonly namespace: Namespace; readonly hold: HoldKind }>> = Object.freeze({
  exclusive: { namespace: 'lock', hold: 'write' },
  read: { namespace: 'rw', hold: 'read' },
  write: { namespace: 'rw', hold: 'write' },
  permit: { namespace: 'sem', hold: 'permit' },
  leader: { namespace: 'elect', hold: 'write' },
})

/** How messages name what a request of this mode is about. */
export function kindOf(mode: LockMode): Kind {
  return mode === 'permit' ? 'semaphore' : mode === 'leader' ? 'election' : 'lock'
}

/** A semaphore's acquire: how many permits, of a semaphore with how many. */
export interface Permits {
  permits: number
  limit: number
}

export interface AcquireRequest {
  mode: LockMode
  key: string
  token: string
  ttlMs: number
  /** The request gave no TTL (ttlMs is the default): a re-grant keeps the hold's latest TTL instead. */
  keepTtl?: boolean
  reentrant: boolean
  /** mode 'permit' only (required there). */
  semaphore?: Permits
  /** How long to wait in line when it is held (0 or undefined: try once). */
  waitMs?: number
  /** Told when the client hangs up: the waiter leaves the line at once. */
  clientGone?: ClientGone
  /** The hold's owner label (not a secret; shown by inspect, listings and a 409). */
  owner?: string
  /** Set by the engine for an acquire bound to a session: the session's reference (never its id). */
  sessionRef?: string
  /**
   * The hold's lock-delay, ms: when it ends without its holder's release, what it freed is granted to
   * nobody for this long. Undefined: none given (a session's acquire then takes the session's); 0: none.
   */
  lockDelayMs?: number
}

/**
 * The client of a waiting acquire hung up. Every parked request keeps one, so it is a flag and one
 * listener rather than an AbortSignal (an EventTarget with two Maps: ~0.7 KB per waiter).
 */
export class ClientGone {
  private listener: GoneListener | undefined
  gone = false

  notify(): void {
    if (this.gone) return
    this.gone = true
    this.tell()
  }

  /** Tell `listener` when the client hangs up (at once, if it already has). One listener. */
  listen(listener: GoneListener): void {
    this.listener = listener
    if (this.gone) this.tell()
  }

  private tell(): void {
    const listener = this.listener
    if (typeof listener === 'function') listener()
    else listener?.stop()
  }
}

/** A function, or an object whose `stop()` is called: a parked waiter is its own listener (no closure each). */
export type GoneListener = (() => void) | { stop(): void }

export interface RenewRequest {
  mode: LockMode
  key: string
  token: string
  /** undefined: the TTL of the hold's latest grant or renew */
  ttlMs: number | undefined
}

export interface ReleaseRequest {
  mode: LockMode
  key: string
  token: string
}

/** A hold the service granted (or re-granted, or renewed): the wire shape, and how it came about. */
export interface Grant extends GrantBody {
  /** A semaphore's hold: its permits, and the semaphore's limit (PermitGrantBody). */
  permits?: number
  limit?: number
  /** true when the token already held the lock (HTTP 200 instead of 201) */
  regranted: boolean
  /** performance.now() when validityMs was computed: the answer takes off the time since (src/http/late-grant.ts) */
  decidedAt: number
}

export type Release = ReleaseBody

/** What a majority of nodes says about one lock; never a token. */
export interface LockState {
  writer: { fence: number; remainingMs: number; holdCount: number } | null
  /** Live read holds; of a semaphore: its live holds. */
  readers: number
  waiters: number
  writerWaiting: boolean
  /** A semaphore's limit (0 for a lock, or when nobody holds or waits) and permits held. */
  limit: number
  permitsInUse: number
  /** ms until the last running lock-delay ends on a majority (0: none). */
  delayedMs: number
  /** Admin views only: each live read or semaphore hold (fence, remaining time, count, permits; never its token). */
  readerHolds?: ReaderHold[]
  /** The owner labels of the live holds (writer first, then read or semaphore holds by expiry; at most MAX_OWNERS_SHOWN). */
  owners: HoldOwner[]
}

/** One live hold's owner label, and the fence that names the hold. */
export interface HoldOwner {
  fence: number
  owner: string
  writer: boolean
}

/** The most owners inspect and a 409 name (the holds in the way). */
export const MAX_OWNERS_SHOWN = 10

/**
 * One read hold, or one hold of a semaphore, as operators see it (never its token): enough to
 * force-release it by fence. `permits` is 0 for a read hold.
 */
export interface ReaderHold {
  fence: number
  remainingMs: number
  holdCount: number
  permits: number
}
