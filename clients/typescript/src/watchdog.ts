/**
 * Keeps a lease alive and says the moment it is lost: renewals at ttl/3 ± 10 % on Node timers, a
 * background watch, a local validity deadline, an optional cap. Node runs timers only when the event
 * loop is free, so every timer (and every read of the hold's state) first checks the local deadline: a
 * timer that fires late signals the loss instead of pretending the hold is still good.
 */
import { performance } from 'node:perf_hooks'
import { LockLostError, LockNotFoundError, NotOwnerError, SessionNotFoundError, type LockServiceError } from './errors.js'
import { jitter, retryDelay, sleep } from './timing.js'
import type { LossReason, WatchEvent } from './wire.js'

export interface WatchdogOptions {
  /** What the messages name ("lock K"). */
  label: string
  ttlMs: number
  /** The grant's validityMs, counted from `anchor`. */
  validityMs: number
  /** performance.now() when the request that was granted was sent. */
  anchor: number
  /** Loss is signalled this long before the local deadline. Default max(50, ttl/10). */
  safetyMarginMs?: number
  /** Stop renewing and signal `max_hold` this long after `anchor`. */
  maxHoldMs?: number
  /**
   * One renew: resolves to the new validityMs; rejects with the service's error or a transport one.
   * Bounded by its timeout only (an answer after stop() is ignored): one signal shared by every renew
   * of a long hold would gather an AbortSignal.any dependent per renew, which some Node versions leak.
   */
  renew: (timeoutMs: number) => Promise<number>
  /** One watch request (a long poll); omitted: no background watch. */
  watch?: (signal: AbortSignal) => Promise<WatchEvent>
  /** Per-request timeout of the client. */
  requestTimeoutMs: number
  random?: () => number
}

const LOSS_TEXT: Record<LossReason, string> = {
  expired: 'the service says its lease expired',
  released: 'the service says it was released (by its token)',
  force_released: 'the service says an admin force-released it',
  session_lost: 'the service says its session was closed or lapsed',
  not_held: 'a renew answered that it is not held by this token any more',
  validity_exhausted: 'renewals kept failing until its validity ran out',
  max_hold: 'maxHoldMs reached: no more renewals',
}

/** Renewal errors after which renewing again cannot help. */
function isGone(err: unknown): boolean {
  return err instanceof LockNotFoundError || err instanceof NotOwnerError || err instanceof SessionNotFoundError
}

export class Watchdog {
  readonly #o: WatchdogOptions
  readonly #lost = new AbortController()
  readonly #stopped = new AbortController()
  readonly #margin: number
  readonly #maxHoldEnds: number
  #deadline: number
  #lostReason: LossReason | undefined
  #renewTimer: NodeJS.Timeout | undefined
  #deadlineTimer: NodeJS.Timeout | undefined
  #maxHoldTimer: NodeJS.Timeout | undefined
  #failures = 0
  /** How many renewals succeeded (for tests and metrics of the caller). */
  renewals = 0

  constructor(o: WatchdogOptions) {
    this.#o = o
    this.#margin = o.safetyMarginMs ?? Math.max(50, o.ttlMs / 10)
    this.#deadline = o.anchor + o.validityMs
    this.#maxHoldEnds = o.maxHoldMs === undefined ? Infinity : o.anchor + o.maxHoldMs
  }

  /** Aborted when the lease is lost; its reason is a {@link LockLostError}. Reading it checks the deadline first. */
  get signal(): AbortSignal {
    this.checkLate()
    return this.#lost.signal
  }

  get lostReason(): LossReason | undefined {
    this.checkLate()
    return this.#lostReason
  }

  /** performance.now() at which the lease stops being safe to act on (validity from the last send). */
  get deadline(): number {
    return this.#deadline
  }

  get safetyMarginMs(): number {
    return this.#margin
  }

  get stopped(): boolean {
    return this.#stopped.signal.aborted
  }

  start(): void {
    if (this.checkLate()) return
    this.#armDeadline()
    if (this.#maxHoldEnds !== Infinity) {
      this.#maxHoldTimer = setTimeout(() => this.#lose('max_hold'), Math.max(0, this.#maxHoldEnds - performance.now()))
    }
    // The first renew is due a third of the TTL after the anchor (the acquire's send), not after now.
    this.#scheduleRenew(Math.max(0, this.#o.anchor + jitter(this.#o.ttlMs / 3, 0.1, this.#o.random) - performance.now()))
    if (this.#o.watch) void this.#watchLoop(this.#o.watch)
  }

  /** Stops renewing and watching (the hold is being released, or was lost). */
  stop(): void {
    this.#stopped.abort()
    clearTimeout(this.#renewTimer)
    clearTimeout(this.#deadlineTimer)
    clearTimeout(this.#maxHoldTimer)
  }

  /** A renew sent at `sentAt` succeeded: the deadline moves to its send time + validity. */
  reanchor(sentAt: number, validityMs: number): void {
    this.#deadline = sentAt + validityMs
    if (!this.stopped) this.#armDeadline()
  }

  /** Signals the loss if the deadline (minus the margin) or the cap has passed; true when lost. */
  checkLate(): boolean {
    if (this.#lostReason !== undefined) return true
    if (this.stopped) return false
    const now = performance.now()
    if (now >= this.#maxHoldEnds) this.#lose('max_hold')
    else if (now >= this.#deadline - this.#margin) this.#lose('validity_exhausted')
    return this.#lostReason !== undefined
  }

  /** The service or a renew said the lease is gone. */
  lose(reason: LossReason): void {
    this.#lose(reason)
  }

  #lose(reason: LossReason): void {
    if (this.#lostReason !== undefined || this.stopped) return
    this.#lostReason = reason
    this.stop()
    this.#lost.abort(new LockLostError(reason, this.#o.label, `${this.#o.label} lost: ${LOSS_TEXT[reason]}`))
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer)
    this.#deadlineTimer = setTimeout(() => this.checkLate(), Math.max(0, this.#deadline - this.#margin - performance.now()))
  }

  #scheduleRenew(delayMs: number): void {
    clearTimeout(this.#renewTimer)
    if (this.stopped) return
    this.#renewTimer = setTimeout(() => void this.#renewOnce(), delayMs)
  }

  async #renewOnce(): Promise<void> {
    if (this.checkLate() || this.stopped) return
    const sentAt = performance.now()
    const left = this.#deadline - this.#margin - sentAt
    try {
      const validityMs = await this.#o.renew(Math.max(50, Math.min(this.#o.requestTimeoutMs, left)))
      if (this.stopped) return
      this.renewals++
      this.#failures = 0
      this.reanchor(sentAt, validityMs)
      if (this.checkLate()) return
      const untilMargin = this.#deadline - this.#margin - performance.now()
      this.#scheduleRenew(Math.min(jitter(this.#o.ttlMs / 3, 0.1, this.#o.random), untilMargin / 2))
    } catch (err) {
      if (this.stopped) return
      if (isGone(err)) return this.#lose('not_held')
      if (this.checkLate()) return
      // Anything else may pass (transport, 503, 429): retry while the validity lasts; the deadline
      // timer signals the loss if none succeeds in time. Retry-After is honoured where the validity leaves room.
      const retryAfterMs = (err as Partial<LockServiceError>).retryAfterMs
      const untilMargin = this.#deadline - this.#margin - performance.now()
      this.#scheduleRenew(Math.min(retryDelay(this.#failures++, retryAfterMs, this.#o.random), Math.max(25, untilMargin / 4)))
    }
  }

  async #watchLoop(watch: (signal: AbortSignal) => Promise<WatchEvent>): Promise<void> {
    const stopped = this.#stopped.signal
    while (!stopped.aborted) {
      try {
        const event = await watch(stopped)
        if (!event.held) return this.#lose(event.reason)
      } catch (err) {
        if (stopped.aborted) return
        if (isGone(err)) return this.#lose('not_held')
        // The service is unreachable or busy: the renewals decide; look again in a second.
        await sleep(1000, stopped).catch(() => undefined)
      }
    }
  }
}
