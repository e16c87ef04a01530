/**
 * A grant's validityMs counts from when the engine decided it (Grant.decidedAt). Between then and the
 * answer the process may have been stopped (SIGSTOP, a paused VM or container) or starved of CPU: the
 * answer carries the validity left at the moment it is sent, and a grant with none left is released
 * and answered 503 `backend_unavailable` (reason `validity_expired`) instead of handed out as a hold.
 */
import { performance } from 'node:perf_hooks'
import { fail, type ServiceError } from '../errors.js'
import type { Grant } from '../locks/types.js'

/** The validity the grant has left now (ms, floored): what it was when decided, less the time since. */
export function validityLeft(grant: Pick<Grant, 'validityMs' | 'decidedAt'>, now = performance.now()): number {
  return Math.floor(grant.validityMs - (now - grant.decidedAt))
}

export function answeredTooLate(heldMs: number): ServiceError {
  return fail.backendUnavailable(
    `the grant's validity ran out before it could be answered (this replica held it ${Math.round(heldMs)} ms: stopped or overloaded); ` +
      'it was released, nothing is held',
    { reason: 'validity_expired' },
  )
}

/** What `answerable` and the hold routes need to give a grant back that came too late. */
export interface LateGrantOptions {
  metrics: { grantsAnsweredLate: { inc(labels: { mode: string }): void } }
  release: () => Promise<unknown>
}

/**
 * The grant to answer, its validity cut to what is left; or, when none is left, the error to answer
 * instead, after releasing the hold (not a re-grant's: the holder had it before this request).
 */
export function answerable(grant: Grant, opts: LateGrantOptions): Grant | ServiceError {
  const now = performance.now()
  const left = validityLeft(grant, now)
  if (left > 0) return left === grant.validityMs ? grant : { ...grant, validityMs: left }
  return tooLate(grant, now, opts)
}

/** A grant with no validity left at `now`: counted, released (not a re-grant's), and the error to answer instead. */
export function tooLate(grant: Grant, now: number, opts: LateGrantOptions): ServiceError {
  opts.metrics.grantsAnsweredLate.inc({ mode: grant.mode })
  if (!grant.regranted) void opts.release().catch(() => undefined) // a hold nobody is told of lapses by its TTL anyway
  return answeredTooLate(now - grant.decidedAt)
}
