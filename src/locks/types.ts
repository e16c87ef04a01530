import type { GrantBody, HoldMode, ReleaseBody } from '../contract/wire.js'
import type { Namespace } from './keys.js'
import type { ReaderHold } from './readers.js'

/** `exclusive`: /locks; `read` / `write`: /rwlocks. */
export type LockMode = HoldMode

/** An exclusive lock is a lock that only ever has a writer, in a namespace of its own. */
export function storageOf(mode: LockMode): { namespace: Namespace; hold: 'read' | 'write' } {
  return mode === 'exclusive' ? { namespace: 'lock', hold: 'write' } : { namespace: 'rw', hold: mode }
}

export interface AcquireRequest {
  mode: LockMode
  key: string
  token: string
  ttlMs: number
  /** The request gave no TTL (ttlMs is the default): a re-grant keeps the hold's latest TTL instead. */
  keepTtl?: boolean
  reentrant: boolean
  /** How long to wait in line when it is held (0 or undefined: try once). */
  waitMs?: number
  /** Told when the client hangs up: the waiter leaves the line at once. */
  clientGone?: ClientGone
}

/**
 * The client of a waiting acquire hung up. Every parked request keeps one, so it is a flag and one
 * listener rather than an AbortSignal (an EventTarget with two Maps: ~0.7 KB per waiter).
 */
export class ClientGone {
  private listener: (() => void) | undefined
  gone = false

  notify(): void {
    if (this.gone) return
    this.gone = true
    this.listener?.()
  }

  /** Call `listener` when the client hangs up (at once, if it already has). One listener. */
  listen(listener: () => void): void {
    this.listener = listener
    if (this.gone) listener()
  }
}

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
  /** true when the token already held the lock (HTTP 200 instead of 201) */
  regranted: boolean
}

export type Release = ReleaseBody

/** What a majority of nodes says about one lock; never a token. */
export interface LockState {
  writer: { fence: number; remainingMs: number; holdCount: number } | null
  readers: number
  waiters: number
  writerWaiting: boolean
  /** Admin views only: each live read hold (fence, remaining time, count; never its token). */
  readerHolds?: ReaderHold[]
}
