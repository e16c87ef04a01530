import { performance } from 'node:perf_hooks'
import { ServiceError } from '../errors.js'
import { seriesBy, type Metrics } from '../metrics.js'
import type { Grant, LockMode, Release } from './types.js'

/** Wraps lock operations so every one of them updates the metrics, whatever the outcome. */
export class Observed {
  private readonly acquireDuration: (mode: string, outcome: string) => { observe(seconds: number): void }
  private readonly contention: (mode: string) => { inc(): void }
  private readonly renewals: (mode: string, outcome: string) => { inc(): void }
  private readonly releases: (mode: string, outcome: string) => { inc(): void }

  constructor(metrics: Metrics) {
    this.acquireDuration = seriesBy((mode, outcome) => metrics.acquireDuration.series({ mode, outcome }))
    const contention = seriesBy((mode) => metrics.contention.series({ mode }))
    this.contention = (mode) => contention(mode, '')
    this.renewals = seriesBy((mode, outcome) => metrics.renewals.series({ mode, outcome }))
    this.releases = seriesBy((mode, outcome) => metrics.releases.series({ mode, outcome }))
  }

  // Not an async function: a waiting acquire stays pending for up to MAX_WAIT_MS, and a .then costs a
  // parked request less memory than a suspended async frame.
  // A refusal may come back as a value (LockEngine.acquire) or as a rejection: counted alike.
  acquire(mode: LockMode, op: () => Promise<Grant | ServiceError>): Promise<Grant | ServiceError> {
    const started = performance.now()
    // The two callbacks share one context and call a method: no closure of its own per parked acquire.
    return run(op).then(
      (outcome) => {
        this.observeAcquire(mode, started, outcome instanceof ServiceError ? outcome : undefined)
        return outcome
      },
      (err: unknown) => {
        this.observeAcquire(mode, started, err ?? 'error')
        throw err
      },
    )
  }

  /** `failure`: undefined for a grant; the refusal or error otherwise. */
  private observeAcquire(mode: LockMode, started: number, failure: unknown): void {
    const held = failure instanceof ServiceError && failure.code === 'lock_held'
    if (held) this.contention(mode).inc()
    // A lock-delay's refusal is a refusal like a held lock's, not an error (lock_delayed_total counts it apart).
    const refused = held || (failure instanceof ServiceError && failure.code === 'lock_delayed')
    const outcome = failure === undefined ? 'granted' : refused ? 'held' : 'error'
    this.acquireDuration(mode, outcome).observe((performance.now() - started) / 1000)
  }

  // .then, not async functions, like acquire: an async layer costs every request a promise and a microtask more.
  renew(mode: LockMode, op: () => Promise<Grant>): Promise<Grant> {
    return run(op).then(
      (grant) => {
        this.renewals(mode, 'renewed').inc()
        return grant
      },
      (err: unknown) => {
        this.renewals(mode, failureOutcome(err)).inc()
        throw err
      },
    )
  }

  release(mode: LockMode, op: () => Promise<Release>): Promise<Release> {
    return run(op).then(
      (result) => {
        this.releases(mode, result.released ? 'released' : 'decremented').inc()
        return result
      },
      (err: unknown) => {
        this.releases(mode, failureOutcome(err)).inc()
        throw err
      },
    )
  }
}

/** op's promise; an op that throws instead of rejecting is counted like one that rejects. */
function run<T>(op: () => Promise<T>): Promise<T> {
  try {
    return op()
  } catch (err) {
    return Promise.reject(err)
  }
}

function failureOutcome(err: unknown): string {
  if (err instanceof ServiceError && (err.code === 'lock_not_found' || err.code === 'not_owner'))
    return err.code === 'lock_not_found' ? 'not_found' : 'not_owner'
  return 'error'
}
