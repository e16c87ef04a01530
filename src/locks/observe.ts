import { ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { Grant, LockMode, Release } from './types.js'

/** Wraps lock operations so every one of them updates the metrics, whatever the outcome. */
export class Observed {
  constructor(private readonly metrics: Metrics) {}

  async acquire(mode: LockMode, op: () => Promise<Grant>): Promise<Grant> {
    const stop = this.metrics.acquireDuration.startTimer({ mode })
    try {
      const grant = await op()
      stop({ outcome: 'granted' })
      return grant
    } catch (err) {
      const held = err instanceof ServiceError && err.code === 'lock_held'
      if (held) this.metrics.contention.inc({ mode })
      stop({ outcome: held ? 'held' : 'error' })
      throw err
    }
  }

  async renew(mode: LockMode, op: () => Promise<Grant>): Promise<Grant> {
    try {
      const grant = await op()
      this.metrics.renewals.inc({ mode, outcome: 'renewed' })
      return grant
    } catch (err) {
      this.metrics.renewals.inc({ mode, outcome: failureOutcome(err) })
      throw err
    }
  }

  async release(mode: LockMode, op: () => Promise<Release>): Promise<Release> {
    try {
      const result = await op()
      this.metrics.releases.inc({ mode, outcome: result.released ? 'released' : 'decremented' })
      return result
    } catch (err) {
      this.metrics.releases.inc({ mode, outcome: failureOutcome(err) })
      throw err
    }
  }
}

function failureOutcome(err: unknown): string {
  if (err instanceof ServiceError && (err.code === 'lock_not_found' || err.code === 'not_owner')) return err.code === 'lock_not_found' ? 'not_found' : 'not_owner'
  return 'error'
}
