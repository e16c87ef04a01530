/** `/sessions`: one lease for many holds, and a session kept alive by a watchdog. */
import { watchAnswer, type WatchOptions } from './operations.js'
import { watchEvents } from './sse.js'
import type { Transport } from './transport.js'
import { checkMs, checkOwner, checkSession } from './validate.js'
import { Watchdog } from './watchdog.js'
import {
  timed,
  type LossReason,
  type SessionClosed,
  type SessionInfo,
  type SessionKeptAlive,
  type SessionOpened,
  type WatchEvent,
} from './wire.js'
import { performance } from 'node:perf_hooks'

export interface SessionOptions {
  /** The session's lease, ms (default: the service's DEFAULT_TTL_MS). */
  ttlMs?: number
  /** The owner label of its holds that have none of their own. */
  owner?: string
  /** The lock-delay of its holds that give none of their own (ms, ≥ 0; see docs/lock-delay.md). */
  lockDelayMs?: number
}

const path = (id: string): string => `/sessions/${checkSession(id, 'id')}`

export class Sessions {
  constructor(readonly transport: Transport) {}

  /** Opens a session (201). Its id is a secret, like a token. */
  async open(options: SessionOptions = {}): Promise<SessionOpened> {
    const body: Record<string, unknown> = {}
    if (options.ttlMs !== undefined) body.ttlMs = checkMs(options.ttlMs, 'ttlMs', 100)
    if (options.owner !== undefined) body.owner = checkOwner(options.owner)
    if (options.lockDelayMs !== undefined) body.lockDelayMs = checkMs(options.lockDelayMs, 'lockDelayMs', 0)
    return timed(await this.transport.json({ method: 'POST', path: '/sessions', body }), 'expiresAt')
  }

  /** Renews the session and every hold bound to it; says which it still has (`holds`) and which it lost (`lost`). */
  async keepalive(id: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<SessionKeptAlive> {
    return timed(await this.transport.json({ method: 'PUT', path: `${path(id)}/keepalive`, ...options }), 'expiresAt')
  }

  inspect(id: string): Promise<SessionInfo> {
    return this.transport.json<SessionInfo>({ method: 'GET', path: path(id) })
  }

  /** Ends the session and releases every hold bound to it. */
  close(id: string, options: { timeoutMs?: number } = {}): Promise<SessionClosed> {
    return this.transport.json<SessionClosed>({ method: 'DELETE', path: path(id), ...options })
  }

  /** Long poll on the session: `released` (closed) or `expired`. */
  watch(id: string, options: WatchOptions = {}): Promise<WatchEvent> {
    return watchAnswer(this.transport, `${path(id)}/watch`, undefined, options)
  }

  events(id: string, options: WatchOptions = {}): AsyncIterable<WatchEvent> {
    return watchEvents(this.transport, `${path(id)}/watch`, undefined, options)
  }

  /**
   * Opens a session and keeps it alive (a keepalive every ttl/3 ± 10 %) until `close()`; its `signal`
   * aborts when it is lost (a keepalive answered 404, or keepalives kept failing until its validity ran out).
   */
  async start(options: SessionOptions & { safetyMarginMs?: number } = {}): Promise<Session> {
    const sentAt = performance.now()
    const opened = await this.open(options)
    const watchdog = new Watchdog({
      label: 'session',
      ttlMs: opened.ttlMs,
      // POST /sessions does not say validityMs: the lease counted from the send is the bound.
      validityMs: opened.ttlMs,
      anchor: sentAt,
      safetyMarginMs: options.safetyMarginMs,
      requestTimeoutMs: this.transport.timeoutMs,
      renew: async (timeoutMs) => (await this.keepalive(opened.id, { timeoutMs })).validityMs,
    })
    watchdog.start()
    return new Session(this, opened, watchdog)
  }
}

/** A session kept alive in the background. Bind holds to it with `{ session }` in their options. */
export class Session {
  #closed: Promise<SessionClosed | undefined> | undefined

  constructor(
    readonly sessions: Sessions,
    readonly opened: SessionOpened,
    readonly watchdog: Watchdog,
  ) {}

  get id(): string {
    return this.opened.id
  }

  get ttlMs(): number {
    return this.opened.ttlMs
  }

  /** Aborted when the session is lost (reason: a {@link LockLostError}). */
  get signal(): AbortSignal {
    return this.watchdog.signal
  }

  get lostReason(): LossReason | undefined {
    return this.watchdog.lostReason
  }

  /** Stops the keepalives and closes the session (its holds are released); at most `timeoutMs` (default 2 s). */
  close(timeoutMs = 2_000): Promise<SessionClosed | undefined> {
    this.#closed ??= (async () => {
      const lost = this.watchdog.lostReason
      this.watchdog.stop()
      if (lost === 'not_held') return undefined
      return this.sessions.close(this.id, { timeoutMs })
    })()
    return this.#closed
  }
}
