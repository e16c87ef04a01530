import type { HoldMode } from './words.js'

/** What the service answers, as types every client of it (lockctl included) can import. */

export type { HoldMode }

/** A grant: 201 for a new hold, 200 for a re-acquire, and the answer of a renew. */
export interface GrantBody {
  key: string
  mode: HoldMode
  /** The owner token: keep it to renew and release. */
  token: string
  /** Strictly greater than every fence issued before for this key. */
  fence: number
  ttlMs: number
  /** How long the holder may safely act: ttlMs − elapsed − clock drift. */
  validityMs: number
  /** ISO 8601 time at which Redis drops the hold (grant time + ttlMs). */
  expiresAt: string
  holdCount: number
}

/** A semaphore's grant: also its permits and the semaphore's limit. */
export interface PermitGrantBody extends GrantBody {
  mode: 'permit'
  /** The permits this hold takes. */
  permits: number
  /** The semaphore's limit (fixed while anyone holds or waits). */
  limit: number
}

export interface ReleaseBody {
  key: string
  /** true when the lock is free; false while a reentrant hold still has holds. */
  released: boolean
  holdCount: number
}
