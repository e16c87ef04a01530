/** The service's routes, one method each: what the {@link Client}'s namespaces are made of. */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { BackendUnavailableError, LockServiceError, TimeoutError, TooManyError, UnreachableError } from './errors.js'
import { retryDelay, sleep } from './timing.js'
import type { Transport } from './transport.js'
import { checkCount, checkFence, checkKey, checkMs, checkOwner, checkSession, checkToken } from './validate.js'
import { timed, type FenceCheck, type HoldKind, type Released, type ServiceLossReason, type WatchEvent } from './wire.js'
import { watchEvents } from './sse.js'

/** Options of an acquire (every kind of hold). */
export interface AcquireOptions {
  /** Lease length, ms (≥ 100). Default: the service's DEFAULT_TTL_MS for a new hold. */
  ttlMs?: number
  /** How long to wait in line when it is held, ms (default 0: try once, a 409 is final). */
  waitMs?: number
  /** The owner token (16–128 of `A-Z a-z 0-9 _ -`); default: a random 128-bit one chosen here. */
  token?: string
  /** Who holds it (shown by inspect, listings and a 409). */
  owner?: string
  /** When this token already holds it: one more hold instead of an idempotent re-grant. */
  reentrant?: boolean
  /** If the hold ends without a release (it expired, or was force-released), nobody gets it for this long, ms. */
  lockDelayMs?: number
  /** Bind the hold to this session (its id, or a {@link Session}): its lease is the session's. */
  session?: string | { readonly id: string }
  /**
   * How long, on top of `waitMs`, an acquire is retried after a transport failure, a timeout, a 503 or
   * a 429 (default 10 000 ms; 0: never retried). Retries reuse the token, so a retry of an acquire that
   * was granted gets the same hold (200, same fence).
   */
  retryBudgetMs?: number
  /** Abandons the acquire (the hold, if granted meanwhile, lapses with its TTL). */
  signal?: AbortSignal
}

/** A semaphore acquire: its limit and the permits this hold takes. */
export interface PermitOptions extends AcquireOptions {
  /** The semaphore's limit (fixed while anyone holds or waits). */
  limit: number
  /** Permits this hold takes (default 1, at most `limit`). */
  permits?: number
}

/** An admin listing's page request. */
export interface ListOptions {
  prefix?: string
  limit?: number
  cursor?: string
}

/** A watch: how long the service waits for the hold to go before answering "still held". */
export interface WatchOptions {
  /** ms (default: the service's 30 s). */
  waitMs?: number
  signal?: AbortSignal
}

export const DEFAULT_RETRY_BUDGET_MS = 10_000

/** A client-chosen token: 128 random bits, URL-safe. */
export function newToken(): string {
  return randomBytes(16).toString('base64url')
}

/** A grant, and the monotonic time (performance.now()) at which the request that got it was sent. */
export interface Timed<G> {
  grant: G
  sentAt: number
  /** The request could wait in line (waitMs > 0). */
  mayHaveWaited: boolean
}

/** The routes of one kind of hold: `/locks/K`, `/rwlocks/K/read`, `/rwlocks/K/write` or `/semaphores/K`. */
export class HoldRoutes<G, O extends AcquireOptions = AcquireOptions> {
  constructor(
    readonly transport: Transport,
    readonly kind: HoldKind,
    readonly pathOf: (key: string) => string,
  ) {}

  /**
   * Acquires a hold. Refused: {@link LockHeldError} (never retried), {@link LimitMismatchError}, …; the
   * grant's `token` is what renew and release take.
   */
  async acquire(key: string, options: O = {} as O): Promise<G> {
    return (await this.acquireTimed(key, options)).grant
  }

  /** {@link acquire}, also saying when the request that was granted was sent (the validity's anchor). */
  async acquireTimed(key: string, options: O = {} as O): Promise<Timed<G>> {
    return postRetrying<G>(this.transport, this.pathOf(key), this.#acquireBody(key, options), options)
  }

  #acquireBody(key: string, o: AcquireOptions): Record<string, unknown> {
    checkKey(key)
    const body: Record<string, unknown> = { token: o.token === undefined ? newToken() : checkToken(o.token) }
    if (o.ttlMs !== undefined) body.ttlMs = checkMs(o.ttlMs, 'ttlMs', 100)
    if (o.waitMs !== undefined && checkMs(o.waitMs, 'waitMs', 0) > 0) body.waitMs = o.waitMs
    if (o.owner !== undefined) body.owner = checkOwner(o.owner)
    if (o.reentrant) body.reentrant = true
    if (o.lockDelayMs !== undefined) body.lockDelayMs = checkMs(o.lockDelayMs, 'lockDelayMs', 0)
    if (o.session !== undefined) body.session = checkSession(typeof o.session === 'string' ? o.session : o.session.id)
    if (o.retryBudgetMs !== undefined) checkMs(o.retryBudgetMs, 'retryBudgetMs', 0)
    if (this.kind === 'permit') {
      const { limit, permits } = o as PermitOptions
      body.limit = checkCount(limit, 'limit', 1)
      if (permits !== undefined) body.permits = checkCount(permits, 'permits', 1, limit)
    }
    return body
  }

  /** Extends the hold (owner only): the same fence, a new validity. `ttlMs` default: the hold's latest TTL. */
  async renew(key: string, token: string, options: { ttlMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<G> {
    checkKey(key)
    checkToken(token)
    const body = options.ttlMs === undefined ? undefined : { ttlMs: checkMs(options.ttlMs, 'ttlMs', 100) }
    const answer = await this.transport.json<Record<string, unknown>>({
      method: 'PUT',
      path: `${this.pathOf(key)}/renew`,
      token,
      body,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    })
    return timed<G>(answer, 'expiresAt')
  }

  /** Releases one hold (owner only). */
  async release(key: string, token: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Released> {
    checkKey(key)
    checkToken(token)
    return this.transport.json<Released>({ method: 'DELETE', path: this.pathOf(key), token, ...options })
  }

  /** Long poll: answers when the hold goes (why, when) or when the wait runs out (still held). */
  async watch(key: string, token: string, options: WatchOptions = {}): Promise<WatchEvent> {
    checkKey(key)
    checkToken(token)
    return watchAnswer(this.transport, `${this.pathOf(key)}/watch`, token, options)
  }

  /** The watch as an event stream: `held` events (after renewals), then one `lost` event; ends when the wait runs out. */
  events(key: string, token: string, options: WatchOptions = {}): AsyncIterable<WatchEvent> {
    checkKey(key)
    checkToken(token)
    return watchEvents(this.transport, `${this.pathOf(key)}/watch`, token, options)
  }
}

/**
 * POSTs an acquire (or a campaign) whose body has its token, retrying a transport failure, a timeout,
 * a 503 or a 429 within waitMs + retryBudgetMs (a retry sends the wait that is left); the answer with
 * its `expiresAt` as a Date, and when the request that got it was sent.
 */
export async function postRetrying<G>(
  transport: Transport,
  path: string,
  body: Record<string, unknown>,
  options: { retryBudgetMs?: number; signal?: AbortSignal },
): Promise<Timed<G>> {
  const waitMs = (body.waitMs as number | undefined) ?? 0
  const waitEnds = performance.now() + waitMs
  const budgetEnds = waitEnds + (options.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS)
  for (let attempt = 0; ; attempt++) {
    const sentAt = performance.now()
    const waitLeft = Math.max(0, Math.floor(waitEnds - sentAt))
    if (waitMs > 0) body.waitMs = waitLeft
    try {
      const answer = await transport.json<Record<string, unknown>>({
        method: 'POST',
        path,
        body,
        timeoutMs: waitLeft + transport.timeoutMs,
        signal: options.signal,
      })
      return { grant: timed<G>(answer, 'expiresAt'), sentAt, mayHaveWaited: waitMs > 0 }
    } catch (err) {
      const delay = retryableAfter(err, attempt)
      if (delay === undefined || performance.now() + delay > budgetEnds) throw err
      await sleep(delay, options.signal)
    }
  }
}

/** The delay before retrying a failed acquire, or undefined when it must not be retried. */
function retryableAfter(err: unknown, attempt: number): number | undefined {
  if (err instanceof UnreachableError || err instanceof TimeoutError) return retryDelay(attempt)
  if (err instanceof BackendUnavailableError || err instanceof TooManyError) return retryDelay(attempt, err.retryAfterMs)
  if (err instanceof LockServiceError && (err.status === 503 || err.status === 429)) return retryDelay(attempt, err.retryAfterMs)
  return undefined
}

export async function watchAnswer(transport: Transport, path: string, token: string | undefined, o: WatchOptions): Promise<WatchEvent> {
  const waitMs = o.waitMs === undefined ? undefined : checkMs(o.waitMs, 'waitMs', 0)
  const answer = await transport.json<{ held: boolean; remainingMs?: number; reason?: ServiceLossReason; at?: string }>({
    method: 'GET',
    path,
    token,
    query: { wait: waitMs === undefined ? undefined : `${waitMs}ms` },
    timeoutMs: (waitMs ?? 30_000) + transport.timeoutMs,
    signal: o.signal,
  })
  return answer.held
    ? { held: true, remainingMs: answer.remainingMs ?? 0 }
    : { held: false, reason: answer.reason as ServiceLossReason, at: new Date(answer.at ?? Date.now()) }
}

export function listQuery(o: ListOptions): Record<string, string | number | undefined> {
  if (o.limit !== undefined) checkCount(o.limit, 'limit', 1)
  return { prefix: o.prefix, limit: o.limit, cursor: o.cursor }
}

/** GET `<resource>/fence/<fence>`, the fence checked here before any request. */
export async function fenceCheck(transport: Transport, resource: string, fence: number, argument = 'fence'): Promise<FenceCheck> {
  return transport.json<FenceCheck>({ method: 'GET', path: `${resource}/fence/${checkFence(fence, argument)}` })
}
