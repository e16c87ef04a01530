/** Keeping the hold of a `lockctl run` while CMD runs: renewals on their own timer, and the watch that says at once when it is lost. */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { LockServiceError, type WatchEvent } from '@lock-service/client'
import { REQUEST_TIMEOUT_MS } from './commands.js'
import { renewOnce, type Lease, type Lost, type Renewal, type Run } from './lease.js'

/** How long a watch request waits on the service before lockctl asks again. */
const WATCH_WAIT_MS = 30_000

/**
 * Renews the hold every third of its validity. The lock counts as lost when a renew answers that it is
 * gone or not ours (404 / 409), when renewing cannot succeed (400 / 401 / 403), or when renewals keep
 * failing until the validity of the last successful grant or renew runs out. Then CMD's process
 * group gets SIGTERM, and SIGKILL after the grace period.
 */
export class Keeper {
  /** performance.now() at which the last grant or renew stops being valid. */
  #deadline: number
  #lost: Lost | undefined
  readonly #stopped = new AbortController()
  #deadlineTimer: NodeJS.Timeout | undefined
  #killTimer: NodeJS.Timeout | undefined

  constructor(
    readonly run: Run,
    readonly lease: Lease,
    readonly graceMs: number,
    readonly signalGroup: (signal: NodeJS.Signals) => void,
  ) {
    this.#deadline = lease.deadline
  }

  start(): void {
    this.#armDeadline()
    this.#loop().catch((err: unknown) =>
      this.#lose(`renewing failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`, false),
    )
  }

  /** Aborted when the keeper stops (CMD exited, or the lock was lost). */
  get stopped(): AbortSignal {
    return this.#stopped.signal
  }

  /** The service said the hold is gone (the watch): stop CMD now rather than at the next renewal. */
  gone(reason: string): void {
    this.#lose(reason, true)
  }

  /** Stops renewing: why the lock was lost, if it was (a validity that has run out by now counts). */
  stop(): Lost | undefined {
    if (this.#lost === undefined && performance.now() > this.#deadline) {
      this.#lost = { reason: 'its validity ran out just as CMD exited', gone: false }
      this.run.warn(`lockctl: ${this.run.context}: lost the lock: ${this.#lost.reason}`)
    }
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    clearTimeout(this.#killTimer)
    return this.#lost
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer)
    this.#deadlineTimer = setTimeout(
      () => this.#lose('no renewal succeeded before its validity ran out', false),
      Math.max(0, this.#deadline - performance.now()),
    )
  }

  #lose(reason: string, gone: boolean): void {
    if (this.#lost !== undefined || this.#stopped.signal.aborted) return
    this.#lost = { reason, gone }
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    this.run.warn(
      `lockctl: ${this.run.context}: lost the lock: ${reason}; stopping the command (SIGTERM now, SIGKILL after ${this.graceMs} ms)`,
    )
    this.signalGroup('SIGTERM')
    this.#killTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.graceMs)
  }

  async #loop(): Promise<void> {
    const stopped = this.#stopped.signal
    // The first renew is due a third of the way into the window, counted from its anchor (the
    // request's send time), not from now: the acquire and starting CMD used some of it already.
    let delay = Math.max(0, this.#deadline - (2 * this.lease.validityMs) / 3 - performance.now())
    let failing = false
    while (!stopped.aborted) {
      try {
        await sleep(delay, undefined, { signal: stopped })
      } catch {
        return
      }
      const sent = performance.now()
      let renewal: Renewal | undefined
      let problem = ''
      try {
        renewal = await renewOnce(
          this.run,
          this.lease.grant.token,
          Math.min(REQUEST_TIMEOUT_MS, Math.max(50, this.#deadline - sent)),
          stopped,
        )
      } catch (err) {
        if (stopped.aborted) return
        problem = err instanceof Error ? err.message : String(err)
      }
      if (stopped.aborted) return
      if (renewal) {
        if (renewal.ok) {
          this.#deadline = sent + renewal.validityMs
          this.#armDeadline()
          delay = renewal.validityMs / 3
          if (failing) this.run.warn(`lockctl: ${this.run.context}: renewed again`)
          failing = false
          continue
        }
        if (renewal.final) return this.#lose(renewal.answer, renewal.gone)
        problem = renewal.answer
      }
      const left = this.#deadline - performance.now()
      if (!failing)
        this.run.warn(
          `lockctl: ${this.run.context}: renew failed: ${problem}; retrying for the ${Math.max(0, Math.round(left))} ms of validity left`,
        )
      failing = true
      delay = Math.min(1000, Math.max(25, left / 4))
    }
  }
}

/**
 * The lost-lock signal: a long poll on the hold's watch route (GET …/watch) for as long as CMD runs.
 * When the service says the hold is gone (released elsewhere, force-released by an operator, its
 * session lost, expired), CMD is stopped at once (exit 70) instead of at the next renewal. A service
 * without watches (404), or a refused watch, leaves the renewals to find out.
 */
export async function watchHold(run: Run, token: string, keeper: Keeper): Promise<void> {
  const stopped = keeper.stopped
  while (!stopped.aborted) {
    let event: WatchEvent
    try {
      event = await run.routes.watch(run.key, token, { waitMs: WATCH_WAIT_MS, signal: stopped })
    } catch (err) {
      if (stopped.aborted) return
      const transient = !(err instanceof LockServiceError) || err.status === 0 || err.status === 503 || err.status === 429
      if (!transient) return
      await sleep(1000, undefined, { signal: stopped }).catch(() => undefined)
      continue
    }
    if (stopped.aborted) return
    if (!event.held) {
      keeper.gone(`the service says it was ${event.reason} at ${event.at.toISOString()}`)
      return
    }
  }
}
