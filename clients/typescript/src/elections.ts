/**
 * `/elections`: campaign, proclaim, renew, resign, inspect, listing, observe (long poll, events,
 * and `changes`, an iterator of every change), and a leadership kept by a watchdog (`Leadership`).
 */
import { performance } from 'node:perf_hooks'
import { BackendUnavailableError, LockNotFoundError, NotOwnerError, TimeoutError, UnreachableError } from './errors.js'
import {
  fenceCheck,
  listQuery,
  newToken,
  postRetrying,
  watchAnswer,
  type ListOptions,
  type Timed,
  type WatchOptions,
} from './operations.js'
import { serverEvents } from './sse.js'
import { sleep } from './timing.js'
import type { Transport } from './transport.js'
import { checkKey, checkMs, checkOwner, checkSession, checkToken } from './validate.js'
import type { Watchdog } from './watchdog.js'
import {
  timed,
  type ElectionInfo,
  type FenceCheck,
  type ElectionPage,
  type LeaderGrant,
  type LeaderRenewed,
  type LossReason,
  type Observed,
  type Proclaimed,
  type Resigned,
  type WatchEvent,
} from './wire.js'

/** A campaign: who campaigns, what it proclaims, its lease, and how long it waits in line. */
export interface CampaignOptions {
  /** Who campaigns (1–200 printable characters; what observers see). */
  candidate: string
  /** A value every observer sees (e.g. the leader's address), up to 4096 bytes. */
  value?: string
  /** The leadership's lease, ms (≥ 100). */
  ttlMs?: number
  /** How long to wait in line for leadership, ms (default 0: a 409 when someone leads). */
  waitMs?: number
  /** Bind the leadership to a session (its id, or a `Session`). */
  session?: string | { readonly id: string }
  /** The leader token (default: a random one chosen here; a retried campaign with it is the same term). */
  token?: string
  /** As for an acquire: retries of transport failures, 503 and 429 within waitMs + this (default 10 s). */
  retryBudgetMs?: number
  signal?: AbortSignal
}

/** What an observer saw last: pass it back to hear only of what changed since. */
export interface ObserveOptions extends WatchOptions {
  /** The term seen (`term` of the last answer). */
  after?: number
  /** The revision seen (`revision` of the last answer; 0: no leader). */
  revision?: number
}

/** One event of an election's observe stream: `elected`, `proclaimed`, `vacant` or `resync`, with its data. */
export interface ElectionEvent {
  event: 'elected' | 'proclaimed' | 'vacant' | 'resync'
  /** `<term>.<revision>` */
  id: string | undefined
  data: Record<string, unknown>
}

const path = (name: string): string => `/elections/${encodeURIComponent(checkKey(name, 'name'))}`

export class Elections {
  constructor(readonly transport: Transport) {}

  /** Campaigns: resolves once leader (201; 200 for the leader's own token again); 409 LockHeldError when the wait runs out. */
  async campaign(name: string, options: CampaignOptions): Promise<LeaderGrant> {
    return (await this.campaignTimed(name, options)).grant
  }

  async campaignTimed(name: string, o: CampaignOptions): Promise<Timed<LeaderGrant>> {
    const body: Record<string, unknown> = {
      candidate: checkOwner(o.candidate, 'candidate'),
      token: o.token === undefined ? newToken() : checkToken(o.token),
    }
    if (o.value !== undefined) body.value = o.value
    if (o.ttlMs !== undefined) body.ttlMs = checkMs(o.ttlMs, 'ttlMs', 100)
    if (o.waitMs !== undefined && checkMs(o.waitMs, 'waitMs', 0) > 0) body.waitMs = o.waitMs
    if (o.session !== undefined) body.session = checkSession(typeof o.session === 'string' ? o.session : o.session.id)
    if (o.retryBudgetMs !== undefined) checkMs(o.retryBudgetMs, 'retryBudgetMs', 0)
    const answer = await postRetrying<LeaderGrant>(this.transport, `${path(name)}/campaign`, body, o)
    return { ...answer, grant: timed<LeaderGrant>(answer.grant, 'since') }
  }

  /** The leader sets a new value (revision + 1). */
  proclaim(name: string, token: string, value: string): Promise<Proclaimed> {
    return this.transport.json<Proclaimed>({ method: 'PUT', path: `${path(name)}/proclaim`, token: checkToken(token), body: { value } })
  }

  /** Extends the leadership (the same term). */
  async renew(name: string, token: string, options: { ttlMs?: number; timeoutMs?: number } = {}): Promise<LeaderRenewed> {
    const body = options.ttlMs === undefined ? undefined : { ttlMs: checkMs(options.ttlMs, 'ttlMs', 100) }
    const answer = await this.transport.json({
      method: 'PUT',
      path: `${path(name)}/renew`,
      token: checkToken(token),
      body,
      timeoutMs: options.timeoutMs,
    })
    return timed<LeaderRenewed>(answer, 'expiresAt')
  }

  /** Ends the term; the next candidate in line is elected. 404 LockNotFoundError once the term is over. */
  resign(name: string, token: string, options: { timeoutMs?: number } = {}): Promise<Resigned> {
    return this.transport.json<Resigned>({ method: 'DELETE', path: path(name), token: checkToken(token), ...options })
  }

  /** Admin: ends whoever's term (observers see `vacant`, `force_released`). */
  forceResign(name: string): Promise<Resigned> {
    return this.transport.json<Resigned>({ method: 'DELETE', path: path(name), query: { force: true } })
  }

  /** Is `term` the election's live term (the leader's fence) right now? `fence` in the answer is the term. */
  async checkFence(name: string, term: number): Promise<FenceCheck> {
    return fenceCheck(this.transport, path(name), term, 'term')
  }

  /** Who leads (never the token); 404 with neither a leader nor candidates. */
  inspect(name: string): Promise<ElectionInfo> {
    return this.transport.json<ElectionInfo>({ method: 'GET', path: path(name) })
  }

  /** Admin: the elections that have a leader. */
  list(options: ListOptions = {}): Promise<ElectionPage> {
    return this.transport.json<ElectionPage>({ method: 'GET', path: '/elections', query: listQuery(options) })
  }

  /** Long poll: answers at once when the election is not as `after`/`revision` say, else when it changes or the wait runs out. */
  observe(name: string, o: ObserveOptions = {}): Promise<Observed> {
    const waitMs = o.waitMs === undefined ? undefined : checkMs(o.waitMs, 'waitMs', 0)
    return this.transport.json<Observed>({
      method: 'GET',
      path: `${path(name)}/observe`,
      query: { after: o.after, revision: o.revision, wait: waitMs === undefined ? undefined : `${waitMs}ms` },
      timeoutMs: (waitMs ?? 30_000) + this.transport.timeoutMs,
      signal: o.signal,
    })
  }

  /** The observe event stream: the current state first, then every change, until the wait runs out. */
  async *events(name: string, o: WatchOptions = {}): AsyncGenerator<ElectionEvent> {
    const waitMs = o.waitMs === undefined ? undefined : checkMs(o.waitMs, 'waitMs', 0)
    const events = serverEvents(this.transport, {
      method: 'GET',
      path: `${path(name)}/observe`,
      query: { wait: waitMs === undefined ? undefined : `${waitMs}ms` },
      timeoutMs: (waitMs ?? 30_000) + this.transport.timeoutMs,
      signal: o.signal,
    })
    for await (const e of events) {
      if (e.name === 'elected' || e.name === 'proclaimed' || e.name === 'vacant' || e.name === 'resync')
        yield { event: e.name, id: e.id, data: e.data }
    }
  }

  /**
   * Every change of the election, for as long as `signal` lets it run: the current state first, then
   * each new state (long polls, passing back what was seen; a failure is retried after a second).
   */
  async *changes(name: string, o: { signal?: AbortSignal; waitMs?: number } = {}): AsyncGenerator<Observed> {
    let seen: { after?: number; revision?: number } = {}
    while (!o.signal?.aborted) {
      let state: Observed
      try {
        state = await this.observe(name, { ...seen, waitMs: o.waitMs ?? 5 * 60_000, signal: o.signal })
      } catch (err) {
        if (o.signal?.aborted) return
        if (!(err instanceof UnreachableError || err instanceof TimeoutError || err instanceof BackendUnavailableError)) throw err
        await sleep(1000, o.signal).catch(() => undefined)
        continue
      }
      seen = { after: state.term, revision: state.revision }
      if (state.changed) yield state
    }
  }

  /** The leader's own lost-leadership signal (a watch of its hold). */
  watch(name: string, token: string, options: WatchOptions = {}): Promise<WatchEvent> {
    return watchAnswer(this.transport, `${path(name)}/watch`, checkToken(token), options)
  }
}

/**
 * A leadership kept by a watchdog: what `client.campaign()` returns and what `whileLeader` passes to
 * its block. `term` is the fence: pass it to whatever the leader writes to.
 */
export class Leadership {
  #grant: LeaderGrant
  #value: string | null
  #revision: number
  #resigned: Promise<Resigned | undefined> | undefined

  constructor(
    readonly elections: Elections,
    readonly watchdog: Watchdog,
    grant: LeaderGrant,
    readonly releaseTimeoutMs: number,
  ) {
    this.#grant = grant
    this.#value = grant.value
    this.#revision = grant.revision
  }

  get name(): string {
    return this.#grant.name
  }

  /** The term: this leadership's fencing token. */
  get term(): number {
    return this.#grant.term
  }

  get token(): string {
    return this.#grant.token
  }

  get candidate(): string {
    return this.#grant.candidate
  }

  /** The value proclaimed last. */
  get value(): string | null {
    return this.#value
  }

  get revision(): number {
    return this.#revision
  }

  get grant(): LeaderGrant {
    return this.#grant
  }

  /** Aborted the moment leadership is lost (reason: a LockLostError); reading it checks the local deadline first. */
  get signal(): AbortSignal {
    return this.watchdog.signal
  }

  get lostReason(): LossReason | undefined {
    return this.watchdog.lostReason
  }

  get deadline(): number {
    return this.watchdog.deadline
  }

  get remainingMs(): number {
    return this.watchdog.checkLate() ? 0 : Math.max(0, this.watchdog.deadline - performance.now())
  }

  /** Throws the LockLostError once leadership is lost. */
  check(): void {
    this.signal.throwIfAborted()
  }

  /** Proclaims a new value (observers see `proclaimed`). */
  async proclaim(value: string): Promise<Proclaimed> {
    this.check()
    const answer = await this.elections.proclaim(this.name, this.token, value)
    this.#value = answer.value
    this.#revision = answer.revision
    return answer
  }

  /** Stops the watchdog and resigns, within `timeoutMs` (default 2 s); as `Hold.release()`. */
  resign(timeoutMs = this.releaseTimeoutMs): Promise<Resigned | undefined> {
    this.#resigned ??= this.#resign(timeoutMs)
    return this.#resigned
  }

  async #resign(timeoutMs: number): Promise<Resigned | undefined> {
    const lost = this.watchdog.lostReason
    this.watchdog.stop()
    if (lost !== undefined && lost !== 'validity_exhausted' && lost !== 'max_hold') return undefined
    const ends = performance.now() + timeoutMs
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.elections.resign(this.name, this.token, { timeoutMs: Math.max(1, ends - performance.now()) })
      } catch (err) {
        if (err instanceof LockNotFoundError || (lost !== undefined && err instanceof NotOwnerError)) return undefined
        const transient = err instanceof UnreachableError || err instanceof TimeoutError || err instanceof BackendUnavailableError
        const pause = Math.min(50 * 2 ** attempt, 500)
        if (!transient || ends - performance.now() < pause + 10) throw err
        await sleep(pause)
      }
    }
  }
}
