import type { Namespace } from './keys.js'

/** `exclusive`: /locks; `read` / `write`: /rwlocks. */
export type LockMode = 'exclusive' | 'read' | 'write'

/** An exclusive lock is a lock that only ever has a writer, in a namespace of its own. */
export function storageOf(mode: LockMode): { namespace: Namespace; hold: 'read' | 'write' } {
  return mode === 'exclusive' ? { namespace: 'lock', hold: 'write' } : { namespace: 'rw', hold: mode }
}

export interface AcquireRequest {
  mode: LockMode
  key: string
  token: string
  ttlMs: number
  reentrant: boolean
  /** How long to wait in line when it is held (0 or undefined: try once). */
  waitMs?: number
  /** Aborted when the client hangs up: the waiter leaves the line at once. */
  signal?: AbortSignal
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

/** A hold the service granted (or re-granted, or renewed). */
export interface Grant {
  key: string
  mode: LockMode
  token: string
  fence: number
  ttlMs: number
  validityMs: number
  expiresAt: string
  holdCount: number
  /** true when the token already held the lock (HTTP 200 instead of 201) */
  regranted: boolean
}

export interface Release {
  key: string
  released: boolean
  holdCount: number
}

/** What a majority of nodes says about one lock; never a token. */
export interface LockState {
  writer: { fence: number; remainingMs: number; holdCount: number } | null
  readers: number
  waiters: number
  writerWaiting: boolean
}
