import { performance } from 'node:perf_hooks'
import { ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { Grant, LockMode, Release } from './types.js'

/** Wraps lock operations so every one of them updates the metrics, whatever the outcome. */
export class Observed {
  constructor(private readonly metrics: Metrics) {}

  // Not an async function: a waiting acquire stays pending for up to MAX_WAIT_MS, and a .then costs a
  // parked request less memory than a suspended async frame.
  acquire(mode: LockMode, op: () => Promise<Grant>): Promise<Grant> {
    const started = performance.now()
    const observe = (outcome: string) => this.metrics.acquireDuration.observe({ mode, outcome }, (performance.now() - started) / 1000)
    return op().then(
      (grant) => {
        observe('granted')
        return grant
      },
      (err: unknown) => {
        const held = err instanceof ServiceError && err.code === 'lock_held'
        if (held) this.metrics.contention.inc({ mode })
        observe(held ? 'held' : 'error')
        throw err
      },
    )
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
  if (err instanceof ServiceError && (err.code === 'lock_not_found' || err.code === 'not_owner'))
    return err.code === 'lock_not_found' ? 'not_found' : 'not_owner'
  return 'error'
}
