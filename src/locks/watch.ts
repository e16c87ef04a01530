import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { fail } from '../errors.js'
import type { Config } from '../config.js'
import { isWordOf, lostReasons, type LostReason } from '../contract/words.js'
import type { Metrics } from '../metrics.js'
import { allSubscribed, type Subscription } from '../redis/node.js'
import type { Quorum } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import { lockKeys, sessionKeys } from './keys.js'
import { sessionRef } from './session-id.js'
import { sessionShowScript } from './scripts/session_show.js'
import { watchScript } from './scripts/watch.js'
import { kindOf, storageOf, type ClientGone, type LockMode } from './types.js'
import { backendUnavailable, consensus, countedValues, majorityFloor, settledByEveryNode } from './votes.js'
import { isoTime } from './iso-time.js'

/** What a watch answers: the hold is gone (why, when), or still held when the wait ran out. */
export type WatchResult = { held: false; reason: LostReason; at: string } | { held: true; remainingMs: number }

/** One look at the hold: held (for how long, bound to a session?), or gone (why and when, if known). */
type Look = { held: true; remainingMs: number; bound: boolean } | { held: false; reason?: LostReason; atMs?: number }

/** Where the scripts push that a watched hold or a session went (include/lost.lua). */
export function lostChannel(prefix: string): string {
  return `${prefix}lost`
}

/** The id a push names a watched hold by: no token travels (include/lost.lua). */
function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex')
}

/** A margin past an expiry before looking again (the Redis clock may be a little behind ours). */
const EXPIRY_MARGIN_MS = 2

/**
 * The lost-lock signal: watchers parked on this replica until their hold (or session) is gone or
 * their wait runs out. A release, force-release or session drop of a watched hold pushes on one
 * channel every replica listens on (the same RedisNode.subscribe as the wait room's pushes); an
 * expiry is timed here from the hold's remaining time, and looked at again when its time comes (a
 * renewal just moves the timer).
 */
export class Watchers {
  private readonly listeners = new Map<string, Set<(reason: LostReason, atMs: number) => void>>()
  private readonly subscriptions: Subscription[] = []
  /** How to wake each parked watcher (shutdown). */
  private readonly parked = new Set<() => void>()
  private stopping = false
  private size = 0

  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly metrics: Metrics,
  ) {}

  /** Settles once every node confirmed the subscription (a push published before that is lost). */
  start(): Promise<void> {
    const channel = lostChannel(this.config.keyPrefix)
    for (const node of this.quorum.nodes) {
      const onPush = (message: string) => {
        const [id = '', reason = '', at = '0'] = message.split('|')
        const known = isWordOf(lostReasons, reason) ? reason : 'released'
        for (const listener of this.listeners.get(id) ?? []) listener(known, Number(at))
      }
      // A push missed while disconnected: each watcher still times its hold's expiry and looks again then.
      this.subscriptions.push(node.subscribe(channel, onPush, () => undefined))
    }
    return allSubscribed(this.subscriptions)
  }

  /** SIGTERM: every parked watcher answers 503 shutting_down (its client asks another replica). */
  stopWatching(): void {
    this.stopping = true
    for (const wake of this.parked) wake()
  }

  async close(): Promise<void> {
    this.stopWatching()
    await Promise.all(this.subscriptions.map((s) => s.close()))
  }

  /** A hold of `token` on lock `key` in `mode`. */
  watchHold(mode: LockMode, key: string, token: string, waitMs: number, gone?: ClientGone, onHeld?: (remainingMs: number) => void) {
    const { namespace, hold } = storageOf(mode)
    const keys = lockKeys(this.config.keyPrefix, namespace, key)
    let seenHeld = false
    const look = async (): Promise<Look> => {
      const tally = await this.quorum.ask((node) => node.call(watchScript, keys.all, { hold, token }), settledByEveryNode)
      const all = countedValues(tally)
      if (all.length < tally.majority) throw backendUnavailable(this.quorum, tally, 'no_majority')
      const held = all.flatMap((r) => (r.code === ReplyCode.HOLDING ? [r] : []))
      if (held.length >= tally.majority) {
        const remainingMs = majorityFloor(
          held.map((r) => r.remainingMs),
          tally.majority,
        )
        seenHeld = true
        return { held: true, remainingMs, bound: held.some((r) => r.bound) }
      }
      const records = all.flatMap((r) =>
        r.code === ReplyCode.NOT_FOUND && r.reason !== undefined ? [{ reason: r.reason, atMs: r.atMs }] : [],
      )
      if (records.length === 0) {
        if (seenHeld) return { held: false }
        // Not held by this token, and no record that it ever was (a mistyped token, or a hold that had
        // expired before the watch began): what a renew would answer, not a "you lost it".
        const others = all.filter((r) => r.code === ReplyCode.NOT_FOUND && r.othersHold).length
        if (others > all.length - others) throw fail.notOwner(key, kindOf(mode))
        throw fail.notFound(key, `${kindOf(mode)} "${key}" is not held by this token (it expired or was released)`)
      }
      // The reason most nodes give (ties: the later in lostReasons).
      const reason = lostReasons[consensus(records.map((r) => lostReasons.indexOf(r.reason)))] as LostReason
      return { held: false, reason, atMs: Math.min(...records.flatMap((r) => (r.reason === reason ? [r.atMs] : []))) }
    }
    return this.watch(sha1(`${keys.holds}|${token}`), look, waitMs, gone, onHeld)
  }

  /** A session: gone when it is closed (released) or lapses (expired). */
  watchSession(by: string, id: string, waitMs: number, gone?: ClientGone, onHeld?: (remainingMs: number) => void) {
    const keys = sessionKeys(this.config.keyPrefix, sessionRef(id))
    const look = async (): Promise<Look> => {
      const tally = await this.quorum.ask((node) => node.call(sessionShowScript, keys.all, { by }), settledByEveryNode)
      const all = countedValues(tally)
      if (all.length < tally.majority) throw backendUnavailable(this.quorum, tally, 'no_majority')
      const live = all.flatMap((r) => (r.code === ReplyCode.LIVE ? [r.remainingMs] : []))
      if (live.length >= tally.majority) return { held: true, remainingMs: majorityFloor(live, tally.majority), bound: false }
      const closedAt = all.flatMap((r) => (r.code === ReplyCode.SESSION_NOT_FOUND && r.closedAt > 0 ? [r.closedAt] : []))
      return closedAt.length > 0 ? { held: false, reason: 'released', atMs: Math.min(...closedAt) } : { held: false }
    }
    return this.watch(sha1(keys.session), look, waitMs, gone, onHeld)
  }

  /**
   * Until the thing `look` looks at is gone (a push for `id`, or a look when its time runs out), the
   * wait runs out, or the client hangs up. A thing never seen held is answered at once.
   */
  private async watch(
    id: string,
    look: () => Promise<Look>,
    waitMs: number,
    gone: ClientGone | undefined,
    onHeld: ((remainingMs: number) => void) | undefined,
  ): Promise<WatchResult> {
    if (this.stopping) throw fail.shuttingDown()
    if (this.size >= this.config.maxWaiters) {
      throw fail.tooManyWatchers(`this replica already has ${this.config.maxWaiters} watchers (MAX_WAITERS); try again later`)
    }
    const deadline = performance.now() + waitMs
    let wake: (() => void) | undefined
    const news: { pushed?: { reason: LostReason; atMs: number } } = {}
    const listener = (reason: LostReason, atMs: number) => {
      news.pushed ??= { reason, atMs }
      wake?.()
    }
    // Read through a function: a push may arrive during any await (TypeScript would narrow a plain read).
    const pushed = () => news.pushed
    let set = this.listeners.get(id)
    if (!set) {
      set = new Set()
      this.listeners.set(id, set)
    }
    set.add(listener)
    this.size++
    this.metrics.watchers.set(this.size)
    const parked = () => wake?.()
    this.parked.add(parked)
    gone?.listen(parked)
    try {
      // Registered before the first look: a push that races it is not missed.
      let expiresAt: number | undefined
      let bound = false
      for (;;) {
        const seen = await look()
        {
          const p = pushed()
          if (p) return this.lost(p.reason, p.atMs)
        }
        if (!seen.held) {
          // No record of why: it expired (with its session, when it was bound to one), or was never held.
          const reason = seen.reason ?? (bound ? 'session_lost' : 'expired')
          const atMs = seen.atMs ?? (expiresAt !== undefined ? Date.now() - (performance.now() - expiresAt) : Date.now())
          return this.lost(reason, atMs)
        }
        bound = seen.bound
        expiresAt = performance.now() + seen.remainingMs
        onHeld?.(seen.remainingMs)
        const left = deadline - performance.now()
        if (left <= 0) return { held: true, remainingMs: Math.max(0, Math.round(expiresAt - performance.now())) }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, seen.remainingMs + EXPIRY_MARGIN_MS))
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
          if (pushed() || gone?.gone || this.stopping) wake()
        })
        wake = undefined
        if (gone?.gone) throw fail.clientGone()
        if (this.stopping) throw fail.shuttingDown()
        {
          const p = pushed()
          if (p) return this.lost(p.reason, p.atMs)
        }
        if (performance.now() >= deadline) return { held: true, remainingMs: Math.max(0, Math.round(expiresAt - performance.now())) }
      }
    } finally {
      this.parked.delete(parked)
      set.delete(listener)
      if (set.size === 0) this.listeners.delete(id)
      this.size--
      this.metrics.watchers.set(this.size)
    }
  }

  private lost(reason: LostReason, atMs: number): WatchResult {
    this.metrics.lostNotifications.inc({ reason })
    return { held: false, reason, at: isoTime(atMs) }
  }
}
