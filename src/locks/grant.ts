import { performance } from 'node:perf_hooks'
import { isoTime } from './iso-time.js'
import type { Grant, LockMode, Permits } from './types.js'

/** The answer for one hold of `req`'s token; it expires `ttlMs` after `since` (wall clock, ms); its validity was computed just now. */
export function grantOf(
  req: { key: string; mode: LockMode; token: string; semaphore?: Permits },
  hold: { fence: number; ttlMs: number; validityMs: number; since: number; holdCount: number; regranted: boolean },
): Grant {
  return {
    key: req.key,
    mode: req.mode,
    token: req.token,
    fence: hold.fence,
    ttlMs: hold.ttlMs,
    validityMs: hold.validityMs,
    expiresAt: isoTime(hold.since + hold.ttlMs),
    holdCount: hold.holdCount,
    ...(req.semaphore ? { permits: req.semaphore.permits, limit: req.semaphore.limit } : {}),
    regranted: hold.regranted,
    decidedAt: performance.now(),
  }
}
