import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { random128 } from '../random.js'
import { holdModes, isWordOf } from '../contract/words.js'
import { fail, ServiceError } from '../errors.js'
import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { Refused } from '../redis/scripts.js'
import type { LockEngine } from './engine.js'
import { fenceHint } from './fence-hint.js'
import { apiKeySessionsKey, lockKeys, sessionKeys, sessionsIndexKey, type LockKeys, type SessionKeys } from './keys.js'
import { storageOf, type AcquireRequest, type Grant, type LockMode } from './types.js'
import { validityMs } from './validity.js'
import { isoTime } from './iso-time.js'
import {
  anyReplies,
  backendUnavailable,
  consensus,
  settledByCounted,
  countWhere,
  majorityFloor,
  renewVotes,
  replies,
  settledForRenew,
  type Reply,
} from './votes.js'

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

/** A hold as a session stores it: "<mode>|<token>|<lock key>" (neither tokens nor keys contain '|'). */
interface Bound {
  entry: string
  kind: LockMode
  token: string
  key: string
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

function parseBound(entry: string): Bound | undefined {
  const [kind, token, key] = entry.split('|')
  if (kind === undefined || token === undefined || key === undefined) return undefined
  if (!isWordOf(holdModes, kind)) return undefined
  return { entry, kind, token, key }
}

/** The strings after a session script's first `fixed` fields: its holds. */
function boundIn(reply: readonly unknown[], fixed: number): Bound[] {
  return reply.slice(fixed).flatMap((e) => parseBound(String(e)) ?? [])
}

/** The holds any of `answers` names (a bind reached at least a majority; any majority shares a node with it). */
function unionOf(answers: readonly (readonly unknown[])[], fixed: number): Bound[] {
  const all = new Map<string, Bound>()
  for (const a of answers) for (const b of boundIn(a, fixed)) all.set(b.entry, b)
  return [...all.values()]
}

/**
 * session_keepalive.lua's holds (the union of what the answers name, as unionOf) with when each was
 * bound (0 once held; the earliest any node says), and the Redis time of the answers (the latest).
 */
function boundSince(answers: readonly (readonly unknown[])[]): { bound: Bound[]; boundAt: Map<string, number>; now: number } {
  const all = new Map<string, Bound>()
  const boundAt = new Map<string, number>()
  let now = 0
  for (const a of answers) {
    now = Math.max(now, Number(a[2] ?? 0))
    for (let i = 3; i + 1 < a.length; i += 2) {
      const b = parseBound(String(a[i]))
      if (!b) continue
      all.set(b.entry, b)
      boundAt.set(b.entry, Math.min(boundAt.get(b.entry) ?? Infinity, Number(a[i + 1] ?? 0)))
    }
  }
  return { bound: [...all.values()], boundAt, now }
}

/** A session's script decided: a majority did it, or a majority knows no such session. */
const settledForSession = (t: Tally<Reply>) =>
  countWhere(t, (c) => c > 0) >= t.majority || countWhere(t, (c) => c === Refused.SESSION_NOT_FOUND) >= t.majority

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
    const answers = await Promise.allSettled(this.quorum.nodes.map((node) => node.run('sessions_index', index, ['census'])))
    let live = -1
    let expired = 0
    for (const a of answers) {
      if (a.status !== 'fulfilled' || !Array.isArray(a.value)) continue
      live = Math.max(live, Number(a.value[0] ?? 0))
      expired = Math.max(expired, Number(a.value[1] ?? 0))
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

  private lockKeysOf(b: Bound): { keys: LockKeys; hold: string } {
    const { namespace, hold } = storageOf(b.kind)
    return { keys: lockKeys(this.config.keyPrefix, namespace, b.key), hold }
  }

  private ask(keys: SessionKeys, script: Parameters<Quorum['nodes'][number]['run']>[0], args: (string | number)[]) {
    return this.quorum.ask((node) => node.run(script, keys.all, args) as Promise<Reply>, settledForSession)
  }

  /** A session script's answer: the counted replies that did it, or the error when no majority did. */
  private decided(tally: Tally<Reply>): Reply[] {
    const done = replies(tally).filter((r) => (r[0] ?? 0) > 0)
    if (done.length >= tally.majority) return done
    if (countWhere(tally, (c) => c === Refused.SESSION_NOT_FOUND) >= tally.majority) throw fail.sessionNotFound()
    throw backendUnavailable(this.quorum, tally, 'no_majority')
  }

  /**
   * MAX_SESSIONS_PER_KEY: the API key's live sessions (key_sessions.lua, under the API key's own tag).
   * 'keep' and 'close' are best effort: a set entry outlives its session by a TTL at most.
   */
  private async perKey(by: string, op: 'open' | 'keep' | 'close', ref: string, ttlMs = 0): Promise<void> {
    const index = [sessionsIndexKey(this.config.keyPrefix)]
    this.quorum.everywhere('sessions_index', index, [op, ref, ttlMs])
    if (by === '') return
    const key = [apiKeySessionsKey(this.config.keyPrefix, by)]
    const args = [op, ref, ttlMs, this.config.maxSessionsPerKey]
    if (op !== 'open') {
      this.quorum.everywhere('key_sessions', key, args)
      return
    }
    const tally = await this.quorum.ask(
      (node) => node.run('key_sessions', key, args) as Promise<Reply>,
      (t) => countWhere(t, (c) => c === 1) >= t.majority || countWhere(t, (c) => c === Refused.TOO_MANY_SESSIONS) >= t.majority,
    )
    if (countWhere(tally, (c) => c === 1) >= tally.majority) return
    this.quorum.everywhere('key_sessions', key, ['close', ref])
    if (countWhere(tally, (c) => c === Refused.TOO_MANY_SESSIONS) >= tally.majority)
      throw fail.tooManySessions(by, this.config.maxSessionsPerKey)
    throw backendUnavailable(this.quorum, tally, 'no_majority')
  }

  /** POST /sessions. `by`: the API key opening it ('' while the service runs open). */
  async open(by: string, ttlMs: number, owner: string | undefined): Promise<SessionInfo & { id: string }> {
    const id = newSessionId()
    const keys = this.keys(id)
    const since = Date.now()
    await this.perKey(by, 'open', sessionRef(id), ttlMs)
    const tally = await this.ask(keys, 'session_open', [by, ttlMs, owner ?? ''])
    if (countWhere(tally, (c) => c === 1) < tally.majority) {
      this.quorum.everywhere('session_close', keys.all, [by])
      void this.perKey(by, 'close', sessionRef(id))
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
      const done = this.decided(await this.ask(keys, 'session_keepalive', [by]))
      const ttlMs = consensus(done.map((r) => r[1] ?? 0))
      const { bound, boundAt, now } = boundSince(done)
      const ref = sessionRef(id)
      void this.perKey(by, 'keep', ref, ttlMs)
      const renewed = await Promise.all(bound.map((b) => this.renewBound(b, ref, ttlMs)))
      const holds: SessionHold[] = []
      const lost: { key: string; kind: LockMode }[] = []
      const gone: string[] = []
      // A hold bound lately may still be waiting in line for its lock: neither lost nor forgotten yet.
      const pendingMs = this.config.maxWaitMs + 2 * this.config.nodeTimeoutMs + 1000
      renewed.forEach((r, i) => {
        const b = bound[i] as Bound
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
  private async renewBound(b: Bound, ref: string, ttlMs: number): Promise<{ held: boolean; gone: boolean; fence: number }> {
    const { keys, hold } = this.lockKeysOf(b)
    try {
      const tally = await this.quorum.ask(
        (node) => node.run('hold_renew_bound', keys.all, [hold, b.token, ref, ttlMs]) as Promise<Reply>,
        settledForRenew,
      )
      const renewed = renewVotes(tally)
      if (renewed.length >= tally.majority) return { held: true, gone: false, fence: consensus(renewed.map((r) => r[1] ?? 0)) }
      return { held: false, gone: countWhere(tally, (c) => c === Refused.NOT_FOUND) >= tally.majority, fence: 0 }
    } catch {
      return { held: false, gone: false, fence: 0 }
    }
  }

  /** Forget holds of a session (best effort: a stale entry is found gone again at the next keepalive). */
  private unbind(keys: SessionKeys, entries: readonly string[]): void {
    this.quorum.everywhere('session_unbind', keys.all, entries)
  }

  /** DELETE /sessions/:id: the session ends at once, then each of its holds is dropped (handed to its waiters). */
  async close(by: string, id: string): Promise<{ key: string; kind: LockMode; released: boolean }[]> {
    const keys = this.keys(id)
    const done = this.decided(await this.ask(keys, 'session_close', [by]))
    const ref = sessionRef(id)
    void this.perKey(by, 'close', ref)
    const hint = fenceHint()
    const released = await Promise.all(
      unionOf(done, 1).map(async (b) => {
        const { keys: lock, hold } = this.lockKeysOf(b)
        try {
          // As a release: removing a hold is safe whoever reports it, so every answer is read.
          const tally = await this.quorum.ask(
            (node) => node.run('hold_drop_bound', lock.all, [hold, b.token, ref, hint]) as Promise<Reply>,
            (t) => t.answers.filter((a) => a.ok).length === t.size,
          )
          return { key: b.key, kind: b.kind, released: anyReplies(tally).some((r) => r[0] === 1) }
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
    const tally = await this.ask(keys, 'session_show', [by])
    const done = this.decided(tally)
    const remainingMs = majorityFloor(
      done.map((r) => r[2] ?? 0),
      tally.majority,
    )
    const owner = String((done[0] as unknown as unknown[])[3] ?? '')
    const ref = sessionRef(id)
    const states = await Promise.all(unionOf(done, 4).map((b) => this.holdState(b, ref)))
    return {
      ttlMs: consensus(done.map((r) => r[1] ?? 0)),
      expiresAt: isoTime(since + remainingMs),
      remainingMs,
      ...(owner ? { owner } : {}),
      holds: states.flatMap((s) => s ?? []).sort(byKey),
    }
  }

  /** A bound hold as a majority sees it, or undefined when a majority does not have it. */
  private async holdState(b: Bound, ref: string): Promise<SessionHold | undefined> {
    const { keys, hold } = this.lockKeysOf(b)
    try {
      const tally = await this.quorum.ask(
        (node) => node.run('hold_state', keys.all, [hold, b.token, ref]) as Promise<Reply>,
        settledByCounted,
      )
      const held = replies(tally).filter((r) => r[0] === 1)
      if (held.length < tally.majority) return undefined
      const remainingMs = majorityFloor(
        held.map((r) => r[2] ?? 0),
        tally.majority,
      )
      return { key: b.key, kind: b.kind, fence: consensus(held.map((r) => r[1] ?? 0)), remainingMs }
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
    const entry = `${req.mode}|${req.token}|${req.key}`
    const tally = await this.ask(keys, 'session_bind', [by, entry, this.config.maxSessionHolds])
    const full = replies(tally).filter((r) => r[0] === Refused.TOO_MANY_HOLDS)
    if (full.length >= tally.majority) {
      // Bad input first: a TTL other than the session's is 400 whether or not the session is full.
      const ttlMs = consensus(full.map((r) => r[2] ?? 0))
      if (askedTtlMs !== undefined && askedTtlMs !== ttlMs) throw ttlMismatch(ttlMs)
      throw fail.tooManyHolds(this.config.maxSessionHolds)
    }
    let done: Reply[]
    try {
      done = this.decided(tally)
    } catch (err) {
      this.unbind(keys, [entry])
      throw err
    }
    const fresh = done.some((r) => r[0] === 1)
    const ttlMs = consensus(done.map((r) => r[1] ?? 0))
    const remaining = majorityFloor(
      done.map((r) => r[2] ?? 0),
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
      this.quorum.everywhere('session_bind', keys.all, [by, entry, 0, 'held'])
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
