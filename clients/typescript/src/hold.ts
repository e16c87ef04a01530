/** A hold kept alive by a watchdog: what `client.lock()` returns and what `withLock` passes to its block. */
import { performance } from 'node:perf_hooks'
import { BackendUnavailableError, LockLostError, LockNotFoundError, NotOwnerError, TimeoutError, UnreachableError } from './errors.js'
import type { HoldRoutes } from './operations.js'
import { sleep } from './timing.js'
import type { Watchdog } from './watchdog.js'
import type { Grant, HoldKind, LossReason, PermitGrant, Released } from './wire.js'

export const DEFAULT_RELEASE_TIMEOUT_MS = 2_000

/** Reasons after which there is nothing left to release. */
const GONE: ReadonlySet<LossReason> = new Set(['expired', 'released', 'force_released', 'session_lost', 'not_held'])

/**
 * A hold: its grant (`fence`, `token`, …), the loss `signal`, and `release()`. The watchdog renews it
 * until it is released or lost.
 */
export class Hold<G extends Grant | PermitGrant = Grant | PermitGrant> {
  #grant: G
  #released: Promise<Released | undefined> | undefined
  /** A failed release (see {@link release}); undefined while none failed. */
  releaseError: Error | undefined

  constructor(
    readonly routes: HoldRoutes<G, never>,
    readonly watchdog: Watchdog,
    grant: G,
    readonly releaseTimeoutMs: number,
  ) {
    this.#grant = grant
  }

  get key(): string {
    return this.#grant.key
  }

  get kind(): HoldKind {
    return this.routes.kind
  }

  get token(): string {
    return this.#grant.token
  }

  /** The fencing token: pass it to the resource you guard, which refuses anything lower than it has seen. */
  get fence(): number {
    return this.#grant.fence
  }

  /** The latest grant or renew answer. */
  get grant(): G {
    return this.#grant
  }

  /**
   * Aborted the moment the hold is lost; `signal.reason` is a {@link LockLostError}. Reading it (or
   * {@link lostReason}, {@link remainingMs}, {@link check}) first checks the local deadline.
   */
  get signal(): AbortSignal {
    return this.watchdog.signal
  }

  /** Why the hold was lost, or undefined while it is held. */
  get lostReason(): LossReason | undefined {
    return this.watchdog.lostReason
  }

  /** performance.now() after which the hold must not be acted on (validity counted from the last send). */
  get deadline(): number {
    return this.watchdog.deadline
  }

  /** ms left of the local validity (0 once lost). */
  get remainingMs(): number {
    return this.watchdog.checkLate() ? 0 : Math.max(0, this.watchdog.deadline - performance.now())
  }

  /** Throws the {@link LockLostError} if the hold is lost (or its validity has passed). */
  check(): void {
    this.signal.throwIfAborted()
  }

  /** Renews now (the watchdog does this by itself) and moves the deadline. */
  async renew(): Promise<G> {
    this.check()
    const sentAt = performance.now()
    try {
      this.#grant = await this.routes.renew(this.key, this.token)
    } catch (err) {
      if (err instanceof LockNotFoundError || err instanceof NotOwnerError) this.watchdog.lose('not_held')
      throw err
    }
    this.watchdog.reanchor(sentAt, this.#grant.validityMs)
    return this.#grant
  }

  /**
   * Stops the watchdog and releases, retrying a 503 or a transport failure, never for longer than
   * `timeoutMs` (default: the hold's releaseTimeoutMs, 2 s). After a loss the service reported, nothing
   * is sent; a 404 or 409 after any loss is not an error. Resolves to the service's answer (undefined
   * when nothing was released); rejects with the last failure. Calling it again returns the same promise.
   */
  release(timeoutMs = this.releaseTimeoutMs): Promise<Released | undefined> {
    this.#released ??= this.#release(timeoutMs)
    return this.#released
  }

  async #release(timeoutMs: number): Promise<Released | undefined> {
    const lost = this.watchdog.lostReason
    this.watchdog.stop()
    if (lost !== undefined && GONE.has(lost)) return undefined
    const ends = performance.now() + timeoutMs
    for (let attempt = 0; ; attempt++) {
      const left = ends - performance.now()
      try {
        return await this.routes.release(this.key, this.token, { timeoutMs: Math.max(1, left) })
      } catch (err) {
        if (lost !== undefined && (err instanceof LockNotFoundError || err instanceof NotOwnerError)) return undefined
        const transient = err instanceof UnreachableError || err instanceof TimeoutError || err instanceof BackendUnavailableError
        const pause = Math.min(50 * 2 ** attempt, 500)
        if (!transient || ends - performance.now() < pause + 10) {
          this.releaseError = err instanceof Error ? err : new Error(String(err))
          throw err
        }
        await sleep(pause)
      }
    }
  }
}

export { LockLostError }
