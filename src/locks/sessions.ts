import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { random128 } from '../random.js'
import { fail, ServiceError } from '../errors.js'
import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import type { LockEngine } from './engine.js'
import { fenceHint as newFenceHint } from './fence-hint.js'
import { apiKeySessionsKey, lockKeys, sessionKeys, sessionsIndexKey, type LockKeys, type SessionKeys } from './keys.js'
import { storageOf, type AcquireRequest, type Grant, type HoldKind, type LockMode } from './types.js'
import { validityMs } from './validity.js'
import { isoTime } from './iso-time.js'
import { backendUnavailable, consensus, settledByCounted, majorityFloor } from './votes.js'
import { boundEntry, type BoundHold } from './scripts/bound-entry.js'
import { holdDropBoundScript } from './scripts/hold_drop_bound.js'
import { holdRenewBoundScript } from './scripts/hold_renew_bound.js'
import { holdStateScript } from './scripts/hold_state.js'
import { keySessionsScript, type KeySessionsInput } from './scripts/key_sessions.js'
import { sessionBindScript, type SessionBindReply } from './scripts/session_bind.js'
import { sessionCloseScript } from './scripts/session_close.js'
import { sessionKeepaliveScript, type BoundSince } from './scripts/session_keepalive.js'
import { sessionOpenScript } from './scripts/session_open.js'
import { sessionShowScript } from './scripts/session_show.js'
import { sessionUnbindScript } from './scripts/session_unbind.js'
import { sessionsIndexScript } from './scripts/sessions_index.js'
import {
  boundRenewVotes,
  countCode,
  decided,
  everywhere,
  settledForBoundRenew,
  settledForSession,
  withCode,
  type Done,
} from './session-votes.js'

/** One hold of a session, as its routes show it (never its token). */
export interface SessionHold {
  key: string
  kind: LockMode
  fence: number
  remainingMs: number
}

export interface SessionInfo {
  ttlMs: number
  expiresAt: string
  owner?: string
}

/** How often the sessions gauge and the expiry count are brought up to date. */
const CENSUS_INTERVAL_MS = 5000

/** The shortest lease a bound hold is granted with, when its session has less left. */
const MIN_HOLD_TTL_MS = 100

/**
 * Session ids: "s." and 128 random bits (base64url; src/contract sessionIdRule). The '.' keeps them
 * apart from lock tokens (which cannot contain one), so using one for the other is a clear 400.
 */
export function newSessionId(): string {
  return `s.${random128()}`
}

/** What Redis knows a session by: a hash of its id (the id, a secret, is never stored or logged). */
export function sessionRef(id: string): string {
  return createHash('sha256').update(id).digest('base64url').slice(0, 22)
}

/** The holds any of `answers` names (a bind reached at least a majority; any majority shares a node with it). */
function unionOf(answers: readonly { holds: readonly BoundHold[] }[]): BoundHold[] {
  const all = new Map<string, BoundHold>()
  for (const a of answers) for (const b of a.holds) all.set(b.entry, b)
  return [...all.values()]
}

/**
 * session_keepalive.lua's holds (the union of what the answers name, as unionOf) with when each was
 * bound (0 once held; the earliest any node says), and the Redis time of the answers (the latest).
 */
function boundSince(answers: readonly { now: number; holds: readonly BoundSince[] }[]): {
  bound: BoundHold[]
  boundAt: Map<string, number>
  now: number
} {
  const all = new Map<string, BoundHold>()
  const boundAt = new Map<string, number>()
  let now = 0
  for (const a of answers) {
    now = Math.max(now, a.now)
    for (const { hold, boundAt: at } of a.holds) {
      all.set(hold.entry, hold)
      boundAt.set(hold.entry, Math.min(boundAt.get(hold.entry) ?? Infinity, at))
    }
  }
  return { bound: [...all.values()], boundAt, now }
}

/**
 * Sessions: one lease for many holds. A session lives in its own keys (its own hash tag); each hold
 * bound to it lives in its lock's keys, marked with the session's reference (include/label.lua). So
 * every script touches the keys of one hash tag: a keepalive is one script on the session's keys,
 * then one per bound hold on that hold's lock (in parallel), which also works where they live in
 * different cluster slots. Every answer counts through the vote rule (votes.ts), on one Redis or a
 * quorum alike; the holds themselves are made by the lock engine's one acquire path.
 */
export class SessionEngine {
  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly locks: LockEngine,
    private readonly metrics: Metrics,
  ) {}

  private censusTimer: NodeJS.Timeout | undefined

  /**
   * The lock_sessions gauge and lock_session_expiries_total, every CENSUS_INTERVAL_MS: sessions_index.lua
   * on every node drops the sessions that lapsed and counts them (once per node, whichever replica
   * asks first), so the replicas' expiry counters add up to the service's. On a quorum the node that
   * knows most speaks (a restarted node knows none).
   */
  async census(): Promise<void> {
    const index = [sessionsIndexKey(this.config.keyPrefix)]
    const answers = await Promise.allSettled(this.quorum.nodes.map((node) => node.call(sessionsIndexScript, index, { op: 'census' })))
    let live = -1
    let expired = 0
    for (const a of answers) {
      if (a.status !== 'fulfilled' || a.value.code !== ReplyCode.COUNTED) continue
      live = Math.max(live, a.value.live)
      expired = Math.max(expired, a.value.expired)
    }
    if (live < 0) return
    this.metrics.sessions.set(live)
    if (expired > 0) this.metrics.sessionExpiries.inc(expired)
  }

  startCensus(): void {
    this.censusTimer = setInterval(() => void this.census().catch(() => undefined), CENSUS_INTERVAL_MS)
    this.censusTimer.unref()
  }

  stopCensus(): void {
    clearInterval(this.censusTimer)
  }

  private keys(id: string): SessionKeys {
    return sessionKeys(this.config.keyPrefix, sessionRef(id))
  }

  private lockKeysOf(b: BoundHold): { keys: LockKeys; hold: HoldKind } {
    const { namespace, hold } = storageOf(b.kind)
    return { keys: lockKeys(this.config.keyPrefix, namespace, b.key), hold }
  }

  /**
   * MAX_SESSIONS_PER_KEY: the API key's live sessions (key_sessions.lua, under the API key's own tag).
   * 'keep' and 'close' are best effort: a set entry outlives its session by a TTL at most.
   */
  private async perKey(by: string, change: KeySessionsInput): Promise<void> {
    everywhere(this.quorum, sessionsIndexScript, [sessionsIndexKey(this.config.keyPrefix)], change)
    if (by === '') return
    const key = [apiKeySessionsKey(this.config.keyPrefix, by)]
    if (change.op !== 'open') {
      everywhere(this.quorum, keySessionsScript, key, change)
      return
    }
    const tally = await this.quorum.ask(
      (node) => node.call(keySessionsScript, key, change),
      (t) => countCode(t, ReplyCode.NOTED) >= t.majority || countCode(t, ReplyCode.TOO_MANY_SESSIONS) >= t.majority,
    )
    if (countCode(tally, ReplyCode.NOTED) >= tally.majority) return
    everywhere(this.quorum, keySessionsScript, key, { op: 'close', ref: change.ref })
    if (countCode(tally, ReplyCode.TOO_MANY_SESSIONS) >= tally.majority) throw fail.tooManySessions(by, this.config.maxSessionsPerKey)
    throw backendUnavailable(this.quorum, tally, 'no_majority')
  }

  /** POST /sessions. `by`: the API key opening it ('' while the service runs open). */
  async open(by: string, ttlMs: number, owner: string | undefined): Promise<SessionInfo & { id: string }> {
    const id = newSessionId()
    const keys = this.keys(id)
    const since = Date.now()
    const ref = sessionRef(id)
    await this.perKey(by, { op: 'open', ref, ttlMs, maxSessions: this.config.maxSessionsPerKey })
    const tally = await this.quorum.ask((node) => node.call(sessionOpenScript, keys.all, { by, ttlMs, owner }), settledForSession)
    if (countCode(tally, ReplyCode.OPENED) < tally.majority) {
      everywhere(this.quorum, sessionCloseScript, keys.all, { by })
      void this.perKey(by, { op: 'close', ref })
      throw backendUnavailable(this.quorum, tally, 'no_majority')
    }
    this.metrics.sessionsOpened.inc()
    return { id, ttlMs, expiresAt: isoTime(since + ttlMs), ...(owner ? { owner } : {}) }
  }

  /**
   * PUT /sessions/:id/keepalive: the session for its TTL, then each hold bound to it on its own lock
   * (in parallel). Answers the holds it still has; those it found gone are forgotten.
   */
  async keepalive(
    by: string,
    id: string,
  ): Promise<SessionInfo & { validityMs: number; holds: SessionHold[]; lost: { key: string; kind: LockMode }[] }> {
    const started = performance.now()
    const since = Date.now()
    try {
      const keys = this.keys(id)
      const tally = await this.quorum.ask((node) => node.call(sessionKeepaliveScript, keys.all, { by }), settledForSession)
      const done = decided(this.quorum, tally)
      const ttlMs = consensus(done.map((r) => r.ttlMs))
      const { bound, boundAt, now } = boundSince(done)
      const ref = sessionRef(id)
      void this.perKey(by, { op: 'keep', ref, ttlMs })
      const renewed = await Promise.all(bound.map((b) => this.renewBound(b, ref, ttlMs)))
      const holds: SessionHold[] = []
      const lost: { key: string; kind: LockMode }[] = []
      const gone: string[] = []
      // A hold bound lately may still be waiting in line for its lock: neither lost nor forgotten yet.
      const pendingMs = this.config.maxWaitMs + 2 * this.config.nodeTimeoutMs + 1000
      renewed.forEach((r, i) => {
        const b = bound[i] as BoundHold
        if (r.held) return holds.push({ key: b.key, kind: b.kind, fence: r.fence, remainingMs: ttlMs })
        if (now - (boundAt.get(b.entry) ?? 0) < pendingMs) return
        lost.push({ key: b.key, kind: b.kind })
        if (r.gone) gone.push(b.entry)
      })
      if (gone.length > 0) {
        this.metrics.sessionHoldsLost.inc(gone.length)
        this.unbind(keys, gone)
      }
      this.metrics.sessionKeepalives.inc({ outcome: 'renewed' })
      return {
        ttlMs,
        expiresAt: isoTime(since + ttlMs),
        validityMs: validityMs(ttlMs, performance.now() - started, this.config.driftFactor),
        holds: holds.sort(byKey),
        lost: lost.sort(byKey),
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

  /** One bound hold renewed on its lock: held (a majority renewed it), and gone (a majority no longer has it bound). */
  private async renewBound(b: BoundHold, ref: string, ttlMs: number): Promise<{ held: boolean; gone: boolean; fence: number }> {
    const { keys, hold } = this.lockKeysOf(b)
    try {
      const tally = await this.quorum.ask(
        (node) => node.call(holdRenewBoundScript, keys.all, { hold, token: b.token, ref, ttlMs }),
        settledForBoundRenew,
      )
      const renewed = boundRenewVotes(tally)
      if (renewed.length >= tally.majority) return { held: true, gone: false, fence: consensus(renewed.map((r) => r.fence)) }
      return { held: false, gone: countCode(tally, ReplyCode.NOT_FOUND) >= tally.majority, fence: 0 }
    } catch {
      return { held: false, gone: false, fence: 0 }
    }
  }

  /** Forget holds of a session (best effort: a stale entry is found gone again at the next keepalive). */
  private unbind(keys: SessionKeys, entries: readonly string[]): void {
    everywhere(this.quorum, sessionUnbindScript, keys.all, { entries })
  }

  /** DELETE /sessions/:id: the session ends at once, then each of its holds is dropped (handed to its waiters). */
  async close(by: string, id: string): Promise<{ key: string; kind: LockMode; released: boolean }[]> {
    const keys = this.keys(id)
    const done = decided(this.quorum, await this.quorum.ask((node) => node.call(sessionCloseScript, keys.all, { by }), settledForSession))
    const ref = sessionRef(id)
    void this.perKey(by, { op: 'close', ref })
    const fenceHint = newFenceHint()
    const released = await Promise.all(
      unionOf(done).map(async (b) => {
        const { keys: lock, hold } = this.lockKeysOf(b)
        try {
          // As a release: removing a hold is safe whoever reports it, so every node's answer is read.
          const tally = await this.quorum.ask((node) => node.call(holdDropBoundScript, lock.all, { hold, token: b.token, ref, fenceHint }))
          return { key: b.key, kind: b.kind, released: tally.answers.some((a) => a.ok && a.value.code === ReplyCode.RELEASED) }
        } catch {
          return { key: b.key, kind: b.kind, released: false }
        }
      }),
    )
    this.metrics.sessionsClosed.inc()
    return released.sort(byKey)
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
    const ref = sessionRef(id)
    const states = await Promise.all(unionOf(done).map((b) => this.holdState(b, ref)))
    return {
      ttlMs: consensus(done.map((r) => r.ttlMs)),
      expiresAt: isoTime(since + remainingMs),
      remainingMs,
      ...(owner ? { owner } : {}),
      holds: states.flatMap((s) => s ?? []).sort(byKey),
    }
  }

  /** A bound hold as a majority sees it, or undefined when a majority does not have it. */
  private async holdState(b: BoundHold, ref: string): Promise<SessionHold | undefined> {
    const { keys, hold } = this.lockKeysOf(b)
    try {
      const tally = await this.quorum.ask((node) => node.call(holdStateScript, keys.all, { hold, token: b.token, ref }), settledByCounted)
      const held = withCode(tally, ReplyCode.HOLDING)
      if (held.length < tally.majority) return undefined
      const remainingMs = majorityFloor(
        held.map((r) => r.remainingMs),
        tally.majority,
      )
      return { key: b.key, kind: b.kind, fence: consensus(held.map((r) => r.fence)), remainingMs }
    } catch {
      return undefined
    }
  }

  /**
   * An acquire bound to a session: noted in the session first (so no hold is ever bound to a session
   * that does not know it), then made by the lock engine with the session's remaining lease and the
   * session's reference on the hold. `askedTtlMs`: a TTL the request gave, which must be the session's.
   */
  async acquire(by: string, id: string, req: AcquireRequest, askedTtlMs: number | undefined): Promise<Grant | ServiceError> {
    const keys = this.keys(id)
    const entry = boundEntry(req)
    const tally = await this.quorum.ask(
      (node) => node.call(sessionBindScript, keys.all, { by, entry, maxHolds: this.config.maxSessionHolds }),
      settledForSession,
    )
    const full = withCode(tally, ReplyCode.TOO_MANY_HOLDS)
    if (full.length >= tally.majority) {
      // Bad input first: a TTL other than the session's is 400 whether or not the session is full.
      const ttlMs = consensus(full.map((r) => r.ttlMs))
      if (askedTtlMs !== undefined && askedTtlMs !== ttlMs) throw ttlMismatch(ttlMs)
      throw fail.tooManyHolds(this.config.maxSessionHolds)
    }
    let done: Done<SessionBindReply>[]
    try {
      done = decided(this.quorum, tally)
    } catch (err) {
      this.unbind(keys, [entry])
      throw err
    }
    const fresh = done.some((r) => r.code === ReplyCode.BOUND)
    const ttlMs = consensus(done.map((r) => r.ttlMs))
    const remaining = majorityFloor(
      done.map((r) => r.remainingMs),
      tally.majority,
    )
    if (askedTtlMs !== undefined && askedTtlMs !== ttlMs) {
      if (fresh) this.unbind(keys, [entry])
      throw ttlMismatch(ttlMs)
    }
    let granted = false
    try {
      // As the engine's acquire: a refusal of a request that does not wait comes back as a value.
      const outcome = await this.locks.acquire({
        ...req,
        ttlMs: Math.max(MIN_HOLD_TTL_MS, remaining),
        keepTtl: false,
        sessionRef: sessionRef(id),
      })
      if (outcome instanceof ServiceError) return outcome
      granted = true
      // Held now (no longer waiting in line): a keepalive that no longer finds it reports it lost.
      everywhere(this.quorum, sessionBindScript, keys.all, { by, entry, held: true })
      return outcome
    } finally {
      if (fresh && !granted) this.unbind(keys, [entry])
    }
  }
}

/** A bound acquire that gave a TTL: it must be the session's. */
function ttlMismatch(ttlMs: number) {
  return fail.invalid(`a hold bound to a session has the session's TTL (${ttlMs} ms): leave ttlMs out, or give that`, [
    { path: 'ttlMs', message: `must be the session's TTL, ${ttlMs}` },
  ])
}

function byKey(a: { key: string; kind: string }, b: { key: string; kind: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0
}
