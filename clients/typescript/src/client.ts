/** The Client: every route of the service, and the one-call helper `withLock`. */
import { performance } from 'node:perf_hooks'
import { InvalidArgumentError, LockLostError, LockNotFoundError, NotOwnerError } from './errors.js'
import { DEFAULT_RELEASE_TIMEOUT_MS, Hold } from './hold.js'
import { fenceCheck, HoldRoutes, listQuery, type AcquireOptions, type ListOptions, type PermitOptions } from './operations.js'
import { Elections, Leadership, type CampaignOptions } from './elections.js'
import { Sessions } from './sessions.js'
import { Transport, type ClientOptions } from './transport.js'
import { checkCount, checkKey, checkMs } from './validate.js'
import { Watchdog } from './watchdog.js'
import type {
  FenceCheck,
  ForceReleased,
  Grant,
  Health,
  HoldKind,
  LockInfo,
  LockPage,
  PermitGrant,
  Readiness,
  RwLockInfo,
  RwLockPage,
  SemaphoreInfo,
  SemaphorePage,
} from './wire.js'

/** Options of `client.lock()` and `withLock()`: which hold, its acquire, and the watchdog's rules. */
export interface LockOptions extends AcquireOptions {
  /** Which hold: `exclusive` (default, /locks), `read` / `write` (/rwlocks), `permit` (/semaphores, needs `limit`). */
  kind?: HoldKind
  /** A semaphore's limit (kind `permit`). */
  limit?: number
  /** Permits the hold takes (kind `permit`, default 1). */
  permits?: number
  /** Opt-in cap: stop renewing and signal `max_hold` this long after the acquire was sent. */
  maxHoldMs?: number
  /** Loss is signalled this long before the local validity deadline (default max(50 ms, ttl/10)). */
  safetyMarginMs?: number
  /** Bound on the release on exit (default 2 000 ms). */
  releaseTimeoutMs?: number
  /** Watch the hold in the background (a long poll) so a loss the service sees is signalled at once (default true). */
  watch?: boolean
  /**
   * withLock only: called with a release failure after the block succeeded (the block's result is
   * still returned). Default: a process warning (`process.emitWarning`), which never includes the token.
   */
  onReleaseError?: (error: Error, hold: Hold) => void
  /** Test hook: the random source of the renewal jitter. */
  random?: () => number
}

/** How long a background watch asks the service to wait before answering "still held". */
const WATCH_WAIT_MS = 5 * 60_000

/** A grant answered this long after it was asked for, by a request that could wait, waited in line. */
const WAITED_MS = 25

type Ops<G> = HoldRoutes<G, AcquireOptions>

/** The admin and inspect routes of `/locks`, with the hold's own routes. */
export class Locks extends HoldRoutes<Grant> {
  /** 404 {@link LockNotFoundError} when it is free. */
  inspect(key: string): Promise<LockInfo> {
    return this.transport.json<LockInfo>({ method: 'GET', path: this.pathOf(checkKey(key)) })
  }

  /** Is `fence` the lock's live fence right now? A snapshot: pair it with the resource's own write window. */
  async checkFence(key: string, fence: number): Promise<FenceCheck> {
    return fenceCheck(this.transport, `/locks/${encodeURIComponent(checkKey(key))}`, fence)
  }

  /** Admin: one page of held locks (`cursor` null: the last page). */
  list(options: ListOptions = {}): Promise<LockPage> {
    return this.transport.json<LockPage>({ method: 'GET', path: '/locks', query: listQuery(options) })
  }

  /** Admin: frees the lock whoever holds it (its holder's watch says `force_released`). */
  forceRelease(key: string): Promise<ForceReleased> {
    return this.transport.json<ForceReleased>({ method: 'DELETE', path: this.pathOf(checkKey(key)), query: { force: true } })
  }
}

/** `/rwlocks`: `read` and `write` holds, inspect, listing, force-release. */
export class RwLocks {
  readonly read: Ops<Grant>
  readonly write: Ops<Grant>
  constructor(readonly transport: Transport) {
    this.read = new HoldRoutes(transport, 'read', (key) => `/rwlocks/${encodeURIComponent(key)}/read`)
    this.write = new HoldRoutes(transport, 'write', (key) => `/rwlocks/${encodeURIComponent(key)}/write`)
  }

  /** `readers: true` (admin) adds each read hold. 404 when nobody holds or waits. */
  inspect(key: string, options: { readers?: boolean } = {}): Promise<RwLockInfo> {
    return this.transport.json<RwLockInfo>({
      method: 'GET',
      path: `/rwlocks/${encodeURIComponent(checkKey(key))}`,
      query: { readers: options.readers ? true : undefined },
    })
  }

  /** Is `fence` the live fence of the write hold or of any one read hold? */
  async checkFence(key: string, fence: number): Promise<FenceCheck> {
    return fenceCheck(this.transport, `/rwlocks/${encodeURIComponent(checkKey(key))}`, fence)
  }

  list(options: ListOptions = {}): Promise<RwLockPage> {
    return this.transport.json<RwLockPage>({ method: 'GET', path: '/rwlocks', query: listQuery(options) })
  }

  /** Admin: frees the write hold. */
  forceReleaseWrite(key: string): Promise<ForceReleased> {
    return this.transport.json({ method: 'DELETE', path: `/rwlocks/${encodeURIComponent(checkKey(key))}/write`, query: { force: true } })
  }

  /** Admin: frees the read hold with this fence (inspect with `readers: true` lists them). */
  forceReleaseRead(key: string, fence: number): Promise<ForceReleased> {
    const path = `/rwlocks/${encodeURIComponent(checkKey(key))}/read`
    return this.transport.json({ method: 'DELETE', path, query: { force: true, fence: checkCount(fence, 'fence', 1) } })
  }
}

/** `/semaphores`: weighted permits under a limit. */
export class Semaphores extends HoldRoutes<PermitGrant, PermitOptions> {
  /** `holds: true` (admin) adds each hold. 404 when nobody holds or waits. */
  inspect(key: string, options: { holds?: boolean } = {}): Promise<SemaphoreInfo> {
    return this.transport.json<SemaphoreInfo>({
      method: 'GET',
      path: this.pathOf(checkKey(key)),
      query: { holds: options.holds ? true : undefined },
    })
  }

  /** Is `fence` the live fence of any one permit hold? */
  async checkFence(key: string, fence: number): Promise<FenceCheck> {
    return fenceCheck(this.transport, `/semaphores/${encodeURIComponent(checkKey(key))}`, fence)
  }

  list(options: ListOptions = {}): Promise<SemaphorePage> {
    return this.transport.json<SemaphorePage>({ method: 'GET', path: '/semaphores', query: listQuery(options) })
  }

  /** Admin: frees the hold with this fence. */
  forceRelease(key: string, fence: number): Promise<ForceReleased> {
    return this.transport.json({
      method: 'DELETE',
      path: this.pathOf(checkKey(key)),
      query: { force: true, fence: checkCount(fence, 'fence', 1) },
    })
  }
}

/**
 * A client of the lock service. Safe for concurrent use: it keeps no per-request state (fetch pools
 * the connections).
 *
 * @example
 * ```ts
 * const client = new Client({ url: 'http://127.0.0.1:8080' })
 * await client.withLock('reports:daily', { ttlMs: 10_000 }, async ({ fence, signal }) => {
 *   await writeReport({ fence, signal })
 * })
 * ```
 */
export class Client {
  readonly transport: Transport
  /** `/locks`: exclusive locks. */
  readonly locks: Locks
  /** `/rwlocks`: read-write locks. */
  readonly rwlocks: RwLocks
  /** `/semaphores`. */
  readonly semaphores: Semaphores
  /** `/sessions`: one lease for many holds. */
  readonly sessions: Sessions
  /** `/elections`: leader election. */
  readonly elections: Elections

  constructor(options: ClientOptions) {
    this.transport = new Transport(options)
    this.locks = new Locks(this.transport, 'exclusive', (key) => `/locks/${encodeURIComponent(key)}`)
    this.rwlocks = new RwLocks(this.transport)
    this.semaphores = new Semaphores(this.transport, 'permit', (key) => `/semaphores/${encodeURIComponent(key)}`)
    this.sessions = new Sessions(this.transport)
    this.elections = new Elections(this.transport)
  }

  /** Liveness: `/healthz`. */
  health(): Promise<Health> {
    return this.transport.json<Health>({ method: 'GET', path: '/healthz' })
  }

  /** Readiness: `/readyz` (a 503 answers its body too: `ready` false and per-node detail). */
  async readiness(): Promise<Readiness> {
    const answer = await this.transport.send({ method: 'GET', path: '/readyz' })
    return JSON.parse(await answer.text()) as Readiness
  }

  /**
   * Is `fence` a live hold's fence right now, on the resource of this kind of hold (`read` and `write`
   * both check the rwlock; `leader`: the election's term)? Same as `locks.checkFence`, … `elections.checkFence`.
   */
  async checkFence(kind: HoldKind | 'leader', key: string, fence: number): Promise<FenceCheck> {
    if (kind === 'exclusive') return this.locks.checkFence(key, fence)
    if (kind === 'read' || kind === 'write') return this.rwlocks.checkFence(key, fence)
    if (kind === 'permit') return this.semaphores.checkFence(key, fence)
    if (kind === 'leader') return this.elections.checkFence(key, fence)
    throw new InvalidArgumentError('kind', 'must be exclusive, read, write, permit or leader')
  }

  /** The routes of one kind of hold. */
  routesOf(kind: HoldKind): Ops<Grant | PermitGrant> {
    if (kind === 'exclusive') return this.locks
    if (kind === 'read') return this.rwlocks.read
    if (kind === 'write') return this.rwlocks.write
    if (kind === 'permit') return this.semaphores as unknown as Ops<PermitGrant>
    throw new TypeError(`kind: not one of exclusive, read, write, permit`)
  }

  /**
   * Acquires a hold and starts its watchdog: renewals at ttl/3 ± 10 %, a background watch, the local
   * deadline (validity from the acquire's send), `maxHoldMs`. After a wait in line (or whenever less
   * than 2/3 of the TTL is left of the window) it renews once before returning, to re-anchor the
   * deadline. Call `hold.release()` when done; `withLock` does all of it for you.
   */
  async lock(key: string, options: LockOptions = {}): Promise<Hold> {
    const routes = this.routesOf(options.kind ?? 'exclusive')
    if (options.maxHoldMs !== undefined) checkMs(options.maxHoldMs, 'maxHoldMs', 1)
    if (options.safetyMarginMs !== undefined) checkMs(options.safetyMarginMs, 'safetyMarginMs', 0)
    if (options.releaseTimeoutMs !== undefined) checkMs(options.releaseTimeoutMs, 'releaseTimeoutMs', 1)
    const { grant, sentAt, mayHaveWaited } = await routes.acquireTimed(key, options)
    const watchdog = new Watchdog({
      label: `${options.kind ?? 'exclusive'} hold on ${grant.key}`,
      ttlMs: grant.ttlMs,
      validityMs: grant.validityMs,
      anchor: sentAt,
      safetyMarginMs: options.safetyMarginMs,
      maxHoldMs: options.maxHoldMs,
      requestTimeoutMs: this.transport.timeoutMs,
      random: options.random,
      renew: async (timeoutMs) => (await routes.renew(grant.key, grant.token, { timeoutMs })).validityMs,
      watch: options.watch === false ? undefined : (signal) => routes.watch(grant.key, grant.token, { waitMs: WATCH_WAIT_MS, signal }),
    })
    const hold = new Hold(routes, watchdog, grant, options.releaseTimeoutMs ?? DEFAULT_RELEASE_TIMEOUT_MS)
    const elapsed = performance.now() - sentAt
    if ((mayHaveWaited && elapsed > WAITED_MS) || grant.validityMs - elapsed < (2 * grant.ttlMs) / 3) {
      await this.#reanchor(hold)
    }
    watchdog.start()
    return hold
  }

  /** The renew before handing over a hold whose window is partly spent; a hold that lapsed meanwhile is lost. */
  async #reanchor(hold: Hold): Promise<void> {
    try {
      await hold.renew()
    } catch (err) {
      if (err instanceof LockNotFoundError || err instanceof NotOwnerError) {
        throw new LockLostError('not_held', hold.key, `${hold.key}: granted after a wait but lapsed before it could be used`)
      }
      // A transport failure: the grant's own window still counts, and the watchdog keeps trying.
      if (hold.watchdog.checkLate()) {
        await hold.release().catch(() => undefined)
        throw err
      }
    }
  }

  /**
   * The one-call helper: acquires, runs `block` with the {@link Hold} (`fence`, `signal`, …) while the
   * watchdog keeps it, and releases on exit (bounded by `releaseTimeoutMs`). The block's own result or
   * error is what surfaces: a release failure after a thrown error is attached to it as `releaseError`;
   * after a result it goes to `onReleaseError` (default: a process warning). A loss aborts
   * `hold.signal` with a {@link LockLostError}: pass the signal to what you call, or check it.
   */
  async withLock<T>(key: string, options: LockOptions, block: (hold: Hold) => Promise<T> | T): Promise<T> {
    const hold = await this.lock(key, options)
    return runThenRelease(
      hold,
      block,
      () => hold.release(),
      (error) => {
        if (options.onReleaseError) options.onReleaseError(error, hold)
        else
          process.emitWarning(
            `lock-service: could not release ${hold.key} (it lapses with its TTL): ${error.message}`,
            'LockReleaseWarning',
          )
      },
    )
  }

  /**
   * Campaigns for leadership (waiting in line up to `waitMs`) and keeps it with a watchdog, as
   * `lock()` keeps a hold: renewals at ttl/3 ± 10 %, a background watch, the local deadline,
   * `maxHoldMs`. `leadership.signal` aborts when leadership is lost; `term` is the fence.
   */
  async campaign(name: string, options: CampaignOptions & LeadershipOptions): Promise<Leadership> {
    if (options.maxHoldMs !== undefined) checkMs(options.maxHoldMs, 'maxHoldMs', 1)
    if (options.releaseTimeoutMs !== undefined) checkMs(options.releaseTimeoutMs, 'releaseTimeoutMs', 1)
    const { grant, sentAt, mayHaveWaited } = await this.elections.campaignTimed(name, options)
    const watchdog = new Watchdog({
      label: `leadership of ${grant.name}`,
      ttlMs: grant.ttlMs,
      validityMs: grant.validityMs,
      anchor: sentAt,
      safetyMarginMs: options.safetyMarginMs,
      maxHoldMs: options.maxHoldMs,
      requestTimeoutMs: this.transport.timeoutMs,
      random: options.random,
      renew: async (timeoutMs) => (await this.elections.renew(grant.name, grant.token, { timeoutMs })).validityMs,
      watch:
        options.watch === false ? undefined : (signal) => this.elections.watch(grant.name, grant.token, { waitMs: WATCH_WAIT_MS, signal }),
    })
    const leadership = new Leadership(this.elections, watchdog, grant, options.releaseTimeoutMs ?? DEFAULT_RELEASE_TIMEOUT_MS)
    const elapsed = performance.now() - sentAt
    if ((mayHaveWaited && elapsed > WAITED_MS) || grant.validityMs - elapsed < (2 * grant.ttlMs) / 3) {
      const renewSent = performance.now()
      try {
        watchdog.reanchor(renewSent, (await this.elections.renew(grant.name, grant.token)).validityMs)
      } catch (err) {
        if (err instanceof LockNotFoundError || err instanceof NotOwnerError) {
          throw new LockLostError('not_held', grant.name, `${grant.name}: elected after a wait but the term lapsed before it could be used`)
        }
        if (watchdog.checkLate()) throw err
      }
    }
    watchdog.start()
    return leadership
  }

  /**
   * The one-call helper for leadership: campaigns (waiting up to `waitMs`), runs `block` while
   * leader, resigns on exit (bounded). `leadership.signal` aborts the moment leadership is lost;
   * `leadership.term` is the fence. Errors and results surface as with `withLock`.
   */
  async whileLeader<T>(
    name: string,
    options: CampaignOptions & LeadershipOptions,
    block: (leadership: Leadership) => Promise<T> | T,
  ): Promise<T> {
    const leadership = await this.campaign(name, options)
    return runThenRelease(
      leadership,
      block,
      () => leadership.resign(),
      (error) => {
        if (options.onReleaseError) options.onReleaseError(error)
        else
          process.emitWarning(
            `lock-service: could not resign ${leadership.name} (it lapses with its TTL): ${error.message}`,
            'LockReleaseWarning',
          )
      },
    )
  }
}

/** The watchdog's options of a leadership (as for a hold). */
export interface LeadershipOptions {
  maxHoldMs?: number
  safetyMarginMs?: number
  releaseTimeoutMs?: number
  watch?: boolean
  onReleaseError?: (error: Error) => void
  random?: () => number
}

/**
 * Runs the block, then releases: the block's result or error is what surfaces. A release failure
 * after an error is attached to it as `releaseError`; after a result it goes to `reportReleaseError`.
 */
async function runThenRelease<H, T>(
  held: H,
  block: (held: H) => Promise<T> | T,
  release: () => Promise<unknown>,
  reportReleaseError: (error: Error) => void,
): Promise<T> {
  let result: T
  try {
    result = await block(held)
  } catch (err) {
    const releaseError = await release().then(
      () => undefined,
      (e: unknown) => e,
    )
    if (releaseError !== undefined && err !== null && typeof err === 'object' && !('releaseError' in err)) {
      Object.defineProperty(err, 'releaseError', { value: releaseError, configurable: true, writable: true })
    }
    throw err
  }
  await release().catch((err: unknown) => reportReleaseError(err instanceof Error ? err : new Error(String(err))))
  return result
}
