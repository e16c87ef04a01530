export type LockMode = 'exclusive' | 'read' | 'write'

export interface AcquireRequest {
  key: string
  token: string
  ttlMs: number
  reentrant: boolean
}

export interface RenewRequest {
  key: string
  token: string
  /** undefined: the TTL of the hold's latest grant or renew */
  ttlMs: number | undefined
}

export interface ReleaseRequest {
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

export interface LockState {
  key: string
  mode: 'exclusive'
  fence: number
  remainingMs: number
  holdCount: number
  waiters: number
}
