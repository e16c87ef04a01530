import type { ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { LockMode } from './types.js'

/**
 * Count an acquire that a lock-delay held back (409 lock_delayed, or a waiter kept in line by one),
 * once per request, with how long the delay still had to run (the refusal's delayedUntil).
 */
export function noteDelayed(metrics: Metrics, mode: LockMode, error: ServiceError): void {
  const until = error.details.delayedUntil
  metrics.lockDelayed.inc({ mode })
  if (typeof until === 'string') metrics.lockDelay.observe({ mode }, Math.max(0, Date.parse(until) - Date.now()) / 1000)
}
