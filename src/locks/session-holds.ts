import { performance } from 'node:perf_hooks'
import { fail, ServiceError } from '../errors.js'
import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import type { LockEngine } from './engine.js'
import { fenceHint as newFenceHint } from './fence-hint.js'
import { lockKeys, type LockKeys, type SessionKeys } from './keys.js'
import { boundEntry, type BoundHold } from './scripts/bound-entry.js'
import { holdDropBoundScript } from './scripts/hold_drop_bound.js'
import { holdRenewBoundScript } from './scripts/hold_renew_bound.js'
import { holdStateScript } from './scripts/hold_state.js'
import { sessionBindScript, type SessionBindReply } from './scripts/session_bind.js'
import type { BoundSince } from './scripts/session_keepalive.js'
import { sessionUnbindScript } from './scripts/session_unbind.js'
import { boundRenewVotes, decided, settledForBoundRenew, settledForSession, withCode, type Done } from './session-votes.js'
import { storageOf, type AcquireRequest, type Grant, type HoldKind, type LockMode } from './types.js'
import { validityMs } from './validity.js'
import { consensus, countCode, majorityFloor, settledByEveryNode } from './votes.js'

/** One hold of a session, as its routes show it (never its token). */
export interface SessionHold {
  key: string
  kind: LockMode
  fence: number
  remainingMs: number
}

/** A hold a session had, by its lock. */
export type LockOf = { key: string; kind: LockMode }

/** The shortest lease a bound hold is granted with, when its session has less left. */
const MIN_HOLD_TTL_MS = 100

/**
 * The holds bound to sessions. Each lives in its lock's keys, marked with its session's reference
 * (include/label.lua), and is named in its session's keys (bound-entry.ts): binding one notes it in
 * the session first, then the lock engine's one acquire path makes it; a keepalive, a close or a look
 * runs one script per hold on that hold's lock (in parallel), so a session and its holds may live in
 * different cluster slots.
 */
export class SessionHolds {
  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly locks: LockEngine,
    private readonly metrics: Metrics,
  ) {}

  /**
   * An acquire bound to session `ref` (its `keys`): noted in the session first (so no hold is ever
   * bound to a session that does not know it), then made by the lock engine with the session's
   * remaining lease and the session's reference on the hold. `askedTtlMs`: a TTL the request gave,
   * which must be the session's.
   */
  async acquire(
    by: string,
    keys: SessionKeys,
    ref: string,
    req: AcquireRequest,
    askedTtlMs: number | undefined,
  ): Promise<Grant | ServiceError> {
    const entry = boundEntry(req)
    const bindStarted = performance.now()
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
      // A hold with no owner label of its own carries its session's (the answers agree: one session).
      const owner = req.owner ?? (done.find((r) => r.owner !== '')?.owner || undefined)
      // Its lock-delay too: the request's when it gives one (0 included), else the session's.
      const lockDelayMs = req.lockDelayMs ?? consensus(done.map((r) => r.lockDelayMs))
      const outcome = await this.locks.acquire({
        ...req,
        ...(owner === undefined ? {} : { owner }),
        lockDelayMs,
        ttlMs: Math.max(MIN_HOLD_TTL_MS, remaining),
        keepTtl: false,
        sessionRef: ref,
      })
      if (outcome instanceof ServiceError) return outcome
      // The hold lasts at least MIN_HOLD_TTL_MS, its session maybe less: valid only while the session
      // is (it lasts `remaining` from some moment after the bind was sent), and none left is no grant.
      // Not for a waiter: keepalives may have extended its session in line (sessions.acquire looks again).
      const decidedAt = performance.now()
      const sessionValidity = req.waitMs ? Infinity : validityMs(remaining, decidedAt - bindStarted, this.config.driftFactor)
      if (sessionValidity <= 0) {
        await this.locks.release({ mode: req.mode, key: req.key, token: req.token }).catch(() => undefined)
        throw fail.sessionNotFound()
      }
      granted = true
      // Held now (no longer waiting in line): a keepalive that no longer finds it reports it lost.
      this.quorum.everywhere(sessionBindScript, keys.all, { by, entry, held: true })
      return sessionValidity < outcome.validityMs ? { ...outcome, validityMs: sessionValidity, decidedAt } : outcome
    } finally {
      if (fresh && !granted) this.unbind(keys, [entry])
    }
  }

  /**
   * A keepalive's second half: each hold session_keepalive.lua named (`answers`, its counted replies)
   * renewed for `ttlMs` on its own lock. The holds still had; those lost (gone, and bound long enough
   * ago not to be waiting in line still), of which those a majority no longer has bound are forgotten.
   */
  async renewAll(
    keys: SessionKeys,
    ref: string,
    ttlMs: number,
    answers: readonly { now: number; holds: readonly BoundSince[] }[],
  ): Promise<{ holds: SessionHold[]; lost: LockOf[] }> {
    const { bound, boundAt, now } = boundSince(answers)
    const renewed = await Promise.all(bound.map((b) => this.renew(b, ref, ttlMs)))
    const holds: SessionHold[] = []
    const lost: LockOf[] = []
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
    return { holds: holds.sort(byLock), lost: lost.sort(byLock) }
  }

  /** One bound hold renewed on its lock: held (a majority renewed it), and gone (a majority no longer has it bound). */
  private async renew(b: BoundHold, ref: string, ttlMs: number): Promise<{ held: boolean; gone: boolean; fence: number }> {
    const { keys, hold } = this.lockOf(b)
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

  /** A closed session's holds, each dropped on its lock (handed to its waiters): whether it was still there. */
  async dropAll(ref: string, bound: readonly BoundHold[]): Promise<(LockOf & { released: boolean })[]> {
    const fenceHint = newFenceHint()
    const released = await Promise.all(
      bound.map(async (b) => {
        const { keys, hold } = this.lockOf(b)
        try {
          // As a release: removing a hold is safe whoever reports it, so every node's answer is read.
          const tally = await this.quorum.ask((node) => node.call(holdDropBoundScript, keys.all, { hold, token: b.token, ref, fenceHint }))
          return { key: b.key, kind: b.kind, released: tally.answers.some((a) => a.ok && a.value.code === ReplyCode.RELEASED) }
        } catch {
          return { key: b.key, kind: b.kind, released: false }
        }
      }),
    )
    return released.sort(byLock)
  }

  /** The holds of `bound` a majority still has bound to session `ref`, each looked up on its lock. */
  async states(ref: string, bound: readonly BoundHold[]): Promise<SessionHold[]> {
    const states = await Promise.all(bound.map((b) => this.state(b, ref)))
    return states.flatMap((s) => s ?? []).sort(byLock)
  }

  private async state(b: BoundHold, ref: string): Promise<SessionHold | undefined> {
    const { keys, hold } = this.lockOf(b)
    try {
      const tally = await this.quorum.ask((node) => node.call(holdStateScript, keys.all, { hold, token: b.token, ref }), settledByEveryNode)
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

  /** Forget holds of a session (best effort: a stale entry is found gone again at the next keepalive). */
  private unbind(keys: SessionKeys, entries: readonly string[]): void {
    this.quorum.everywhere(sessionUnbindScript, keys.all, { entries })
  }

  private lockOf(b: BoundHold): { keys: LockKeys; hold: HoldKind } {
    const { namespace, hold } = storageOf(b.kind)
    return { keys: lockKeys(this.config.keyPrefix, namespace, b.key), hold }
  }
}

/** The holds any of `answers` names (a bind reached at least a majority; any majority shares a node with it). */
export function unionOf(answers: readonly { holds: readonly BoundHold[] }[]): BoundHold[] {
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

/** A bound acquire that gave a TTL: it must be the session's. */
function ttlMismatch(ttlMs: number) {
  return fail.invalid(`a hold bound to a session has the session's TTL (${ttlMs} ms): leave ttlMs out, or give that`, [
    { path: 'ttlMs', message: `must be the session's TTL, ${ttlMs}` },
  ])
}

function byLock(a: LockOf, b: LockOf): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0
}
