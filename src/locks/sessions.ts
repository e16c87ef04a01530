import { performance } from 'node:perf_hooks'
import { fail, ServiceError } from '../errors.js'
import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import type { LockEngine } from './engine.js'
import { sessionKeys, type SessionKeys } from './keys.js'
import { isoTime } from './iso-time.js'
import { sessionCloseScript } from './scripts/session_close.js'
import { sessionKeepaliveScript } from './scripts/session_keepalive.js'
import { sessionOpenScript } from './scripts/session_open.js'
import { sessionShowScript } from './scripts/session_show.js'
import { SessionCounts } from './session-counts.js'
import { SessionHolds, unionOf, type LockOf, type SessionHold } from './session-holds.js'
import { newSessionId, sessionRef } from './session-id.js'
import { decided, settledForSession } from './session-votes.js'
import { ClientGone, type AcquireRequest, type Grant } from './types.js'
import type { Watchers } from './watch.js'
import { validityMs } from './validity.js'
import { backendUnavailable, consensus, countCode, majorityFloor } from './votes.js'

export type { SessionHold } from './session-holds.js'

export interface SessionInfo {
  ttlMs: number
  expiresAt: string
  owner?: string
}

/** A session as opened: with the lock-delay its holds take when they give none. */
export interface OpenedSession extends SessionInfo {
  id: string
  lockDelayMs: number
}

/**
 * Sessions: one lease for many holds. A session lives in its own keys (its own hash tag); the holds
 * bound to it live in their locks' keys (session-holds.ts), and the sessions are counted apart
 * (session-counts.ts). So every script touches the keys of one hash tag: a keepalive is one script on
 * the session's keys, then one per bound hold on that hold's lock (in parallel), which also works where
 * they live in different cluster slots. Every answer counts through the vote rule (votes.ts), on one
 * Redis or a quorum alike.
 */
export class SessionEngine {
  private readonly counts: SessionCounts
  private readonly holds: SessionHolds
  private watchers: Watchers | undefined

  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly locks: LockEngine,
    private readonly metrics: Metrics,
  ) {
    this.counts = new SessionCounts(quorum, config, metrics)
    this.holds = new SessionHolds(quorum, config, locks, metrics)
  }

  /** The sessions gauge and expiry count brought up to date now (SessionCounts.census). */
  census(): Promise<void> {
    return this.counts.census()
  }

  startCensus(): void {
    this.counts.startCensus()
  }

  stopCensus(): void {
    this.counts.stopCensus()
  }

  private keys(id: string): SessionKeys {
    return sessionKeys(this.config.keyPrefix, sessionRef(id))
  }

  /** POST /sessions. `by`: the API key opening it ('' while the service runs open). */
  async open(by: string, ttlMs: number, owner: string | undefined, lockDelayMs = 0): Promise<OpenedSession> {
    const id = newSessionId()
    const keys = this.keys(id)
    const since = Date.now()
    const ref = sessionRef(id)
    await this.counts.open(by, ref, ttlMs)
    const tally = await this.quorum.ask(
      (node) => node.call(sessionOpenScript, keys.all, { by, ttlMs, owner, lockDelayMs }),
      settledForSession,
    )
    if (countCode(tally, ReplyCode.OPENED) < tally.majority) {
      this.quorum.everywhere(sessionCloseScript, keys.all, { by })
      this.counts.close(by, ref)
      throw backendUnavailable(this.quorum, tally, 'no_majority')
    }
    this.metrics.sessionsOpened.inc()
    return { id, ttlMs, expiresAt: isoTime(since + ttlMs), ...(owner ? { owner } : {}), lockDelayMs }
  }

  /**
   * PUT /sessions/:id/keepalive: the session for its TTL, then each hold bound to it on its own lock
   * (in parallel). Answers the holds it still has; those it found gone are forgotten.
   */
  async keepalive(by: string, id: string): Promise<SessionInfo & { validityMs: number; holds: SessionHold[]; lost: LockOf[] }> {
    const started = performance.now()
    const since = Date.now()
    try {
      const keys = this.keys(id)
      const tally = await this.quorum.ask((node) => node.call(sessionKeepaliveScript, keys.all, { by }), settledForSession)
      const done = decided(this.quorum, tally)
      const ttlMs = consensus(done.map((r) => r.ttlMs))
      const ref = sessionRef(id)
      this.counts.keep(by, ref, ttlMs)
      const { holds, lost } = await this.holds.renewAll(keys, ref, ttlMs, done)
      this.metrics.sessionKeepalives.inc({ outcome: 'renewed' })
      return {
        ttlMs,
        expiresAt: isoTime(since + ttlMs),
        validityMs: validityMs(ttlMs, performance.now() - started, this.config.driftFactor),
        holds,
        lost,
      }
    } catch (err) {
      this.metrics.sessionKeepalives.inc({
        outcome: err instanceof Error && 'code' in err && err.code === 'session_not_found' ? 'not_found' : 'error',
      })
      throw err
    } finally {
      this.metrics.sessionKeepaliveDuration.observe((performance.now() - started) / 1000)
    }
  }

  /** DELETE /sessions/:id: the session ends at once, then each of its holds is dropped (handed to its waiters). */
  async close(by: string, id: string): Promise<(LockOf & { released: boolean })[]> {
    const keys = this.keys(id)
    const done = decided(this.quorum, await this.quorum.ask((node) => node.call(sessionCloseScript, keys.all, { by }), settledForSession))
    const ref = sessionRef(id)
    this.counts.close(by, ref)
    const released = await this.holds.dropAll(ref, unionOf(done))
    this.metrics.sessionsClosed.inc()
    return released
  }

  /** GET /sessions/:id: the session and the holds it still has (each looked up on its lock). */
  async show(by: string, id: string): Promise<SessionInfo & { remainingMs: number; holds: SessionHold[] }> {
    const keys = this.keys(id)
    const since = Date.now()
    const tally = await this.quorum.ask((node) => node.call(sessionShowScript, keys.all, { by }), settledForSession)
    const done = decided(this.quorum, tally)
    const remainingMs = majorityFloor(
      done.map((r) => r.remainingMs),
      tally.majority,
    )
    const owner = done[0]?.owner ?? ''
    const holds = await this.holds.states(sessionRef(id), unionOf(done))
    return {
      ttlMs: consensus(done.map((r) => r.ttlMs)),
      expiresAt: isoTime(since + remainingMs),
      remainingMs,
      ...(owner ? { owner } : {}),
      holds,
    }
  }

  /** How a waiting acquire learns that its session went (set once the watchers exist: app.ts). */
  watchSessionsWith(watchers: Watchers): void {
    this.watchers = watchers
  }

  /**
   * An acquire bound to session `id` (SessionHolds.acquire). One that waits in line leaves the line as
   * soon as its session is closed or lapses (a watch of the session runs beside it), and a grant that
   * raced the session's end is given back: a hold is never granted to a session that is gone.
   */
  async acquire(by: string, id: string, req: AcquireRequest, askedTtlMs: number | undefined): Promise<Grant | ServiceError> {
    const keys = this.keys(id)
    const watchers = this.watchers
    if (!req.waitMs || !watchers) return this.holds.acquire(by, keys, sessionRef(id), req, askedTtlMs)
    // The wait ends when the client hangs up (as any wait) or when the session goes.
    const leave = new ClientGone()
    const stopWatching = new ClientGone()
    req.clientGone?.listen(() => leave.notify())
    let sessionGone = false
    const watching = watchers.watchSession(by, id, req.waitMs + 2 * this.config.nodeTimeoutMs, stopWatching).then(
      (seen) => {
        if (seen.held) return
        sessionGone = true
        leave.notify()
      },
      () => undefined,
    )
    let outcome: Grant | ServiceError
    try {
      outcome = await this.holds.acquire(by, keys, sessionRef(id), { ...req, clientGone: leave }, askedTtlMs)
    } catch (err) {
      if (sessionGone) throw fail.sessionNotFound()
      throw err
    } finally {
      stopWatching.notify()
      void watching
    }
    if (outcome instanceof ServiceError) return outcome
    if (sessionGone || !(await this.live(by, keys))) {
      await this.locks.release({ mode: req.mode, key: req.key, token: req.token }).catch(() => undefined)
      throw fail.sessionNotFound()
    }
    return outcome
  }

  /** Whether a majority still has the session (a waiting acquire's last look before it answers its grant). */
  private async live(by: string, keys: SessionKeys): Promise<boolean> {
    const tally = await this.quorum.ask((node) => node.call(sessionShowScript, keys.all, { by }), settledForSession)
    return countCode(tally, ReplyCode.LIVE) >= tally.majority
  }
}
