import { performance } from 'node:perf_hooks'
import { fail, type ServiceError } from '../errors.js'
import type { Config } from '../config.js'
import { sequentialIds } from '../random.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import { lockKeys, type LockKeys, type Namespace } from './keys.js'
import {
  kindOf,
  storageOf,
  type AcquireRequest,
  type Grant,
  type HoldKind,
  type LockMode,
  type LockState,
  type Permits,
  type Release,
  type ReleaseRequest,
  type RenewRequest,
} from './types.js'
import { validityMs } from './validity.js'
import { fenceHint } from './fence-hint.js'
import { listLocks, type LockPage } from './listing.js'
import { holdOwners } from './owners.js'
import { readerHolds } from './readers.js'
import type { HandOffVote, WaitRoom, Waiter } from './waiting.js'
import { isoTime } from './iso-time.js'
import type { Metrics } from '../metrics.js'
import type { RedisNode } from '../redis/node.js'
import { acquireScript, type AcquireInput, type AcquireReply, type Held } from './scripts/acquire.js'
import { fenceCommitScript } from './scripts/fence_commit.js'
import { forceReleaseScript } from './scripts/force_release.js'
import { holdLabelScript } from './scripts/hold_label.js'
import { inspectScript } from './scripts/inspect.js'
import { releaseScript } from './scripts/release.js'
import { renewScript } from './scripts/renew.js'
import { rollbackScript } from './scripts/rollback.js'
import { agreeingOnSlots, sameSlots, slotsProposal } from './slots.js'
import {
  answeredValues,
  backendUnavailable,
  consensus,
  countCode,
  countedValues,
  grantingReplies,
  grantVotes,
  heldReplies,
  majorityFloor,
  notHeld,
  refusal,
  renewalVotes,
  settledByCounted,
  settledByMajority,
  settledForAttempt,
  settledForRenewal,
} from './votes.js'

/** A grant and the nodes that voted for it; `attempt`: the attempt id, when an attempt made it. */
interface Won {
  grant: Grant
  votedYes: Set<RedisNode>
  attempt?: string
}
type Attempt =
  | ({ granted: true; hold: HoldKind; attempt: string } & Won)
  | { granted: false; error: ServiceError; retry: boolean; wakeInMs: number; split: boolean; held?: readonly Held[] }

/**
 * The lock engine: exclusive locks, read/write holds and semaphores' permits on a quorum of Redis
 * masters (one node is simply the quorum of one). Knows nothing of HTTP: answers with values, or
 * throws ServiceError.
 */
export class LockEngine {
  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly room: WaitRoom,
    private readonly metrics: Metrics,
  ) {}

  private keys(mode: LockMode, key: string): { keys: LockKeys; hold: HoldKind } {
    const { namespace, hold } = storageOf(mode)
    return { keys: lockKeys(this.config.keyPrefix, namespace, key), hold }
  }

  /**
   * One acquire: granted at once, or (waitMs > 0) after waiting in line until a release hands the
   * lock over or an expiry lets it through, or refused. A grant that races the client hanging up is
   * given back at once. The refusal of a request that does not wait (409 lock_held on a contended
   * lock, the hot path of contention) comes back as a value, not a rejection: a rejection costs every
   * layer it passes through a throw. Anything else (a refusal after waiting included) rejects.
   */
  acquire(req: AcquireRequest): Promise<Grant | ServiceError> {
    // A request that may wait takes its place in line with its first attempt. When this replica
    // cannot take another waiter, it still gets one try.
    return req.waitMs && this.room.hasRoom ? this.acquireWaiting(req, req.waitMs) : this.acquireOnce(req)
  }

  private async acquireOnce(req: AcquireRequest): Promise<Grant | ServiceError> {
    const first = await this.attempt(req)
    if (first.granted) {
      if (req.clientGone?.gone) {
        this.rollback(this.keys(req.mode, req.key).keys, first.hold, req.token, first.attempt)
        throw fail.clientGone()
      }
      return first.grant
    }
    if (req.waitMs && first.retry) throw this.room.noRoom()
    return withOwners(first.error, first.held)
  }

  private async acquireWaiting(req: AcquireRequest, waitMs: number): Promise<Grant> {
    const { hold } = storageOf(req.mode)
    const started = performance.now()
    const deadline = started + waitMs
    // From here on waiter.keys: the waiters of one lock share one LockKeys.
    const waiter = this.room.park(this.keys(req.mode, req.key).keys, req.clientGone)
    let won: Won | undefined
    let waited = false
    let result: 'granted' | 'timeout' | 'cancelled' = 'cancelled'
    try {
      while (!won) {
        const outcome = await this.attempt(req, waiter)
        if (outcome.granted) {
          won = outcome
          break
        }
        if (!outcome.retry) throw outcome.error
        waited = true
        if (performance.now() >= deadline) {
          result = 'timeout'
          throw fail.afterWaiting(withOwners(outcome.error, outcome.held), performance.now() - started)
        }
        // Asleep in line until a push, until the holds ahead lapse (wakeInMs), or until the wait runs
        // out; a split vote retries after a random pause (quorum mode). A push may be the lock itself,
        // handed over by a release: from a majority of nodes that is the grant, with no further round
        // trip. Anything else: look again. (One loop here rather than a helper: every parked request
        // keeps its async frames, ~0.5 KB each.)
        let nap = outcome.split ? 5 + Math.random() * 45 : outcome.wakeInMs > 0 ? outcome.wakeInMs + 1 : Infinity
        for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
          const why = await waiter.sleep(Math.min(nap, left))
          if (why === 'aborted') throw this.room.abortReason() ?? outcome.error
          const votes = this.handOffVotes(waiter)
          won = votes.length >= this.quorum.majority ? await this.handedOver(req, waiter, votes) : undefined
          // A majority handed a semaphore's permits over in different slots: an attempt (two rounds) decides.
          const disagree = waiter.handOffCount >= this.quorum.majority
          if (won || why !== 'woken' || waiter.handOffCount === 0 || votes.length >= this.quorum.majority || disagree) break
          // Some nodes handed over, not yet a majority: give the others a moment to follow (the release
          // behind the push ran on every node at once). Not a node timeout: the nodes may have handed
          // the rest to other waiters (their lines differ after a failed attempt), each of them with a
          // minority too, and nobody holding anything that a release could pass on; then only an
          // attempt (its rollback hands the hold on) moves the line. A random pause, as after a split
          // vote, so that waiters split on one release do not all attempt at once.
          nap = Math.min(this.config.nodeTimeoutMs, HANDOFF_FOLLOW_MS + Math.random() * HANDOFF_FOLLOW_MS)
        }
      }
      // A grant that raced the client hanging up (or shutdown) is given back in `finally`.
      if (waiter.aborted) throw this.room.abortReason() ?? fail.clientGone()
      if (waiter.wokenAt !== undefined) this.metrics.handoff.observe((performance.now() - waiter.wokenAt) / 1000)
      // A hold handed over carries the waiter's token and TTL only: its labels follow.
      if (won.attempt === undefined && (req.owner || req.sessionRef)) await this.label(waiter.keys, req)
      result = 'granted'
      return won.grant
    } finally {
      if (result === 'granted' && won) {
        // The granting scripts took the waiter out of line on the nodes that granted.
        const granted = won.votedYes
        this.room.leave(
          waiter,
          this.quorum.nodes.filter((n) => !granted.has(n)),
        )
      } else {
        if (won?.attempt) this.rollback(waiter.keys, hold, req.token, won.attempt)
        this.room.leave(waiter, undefined, { hold, token: req.token })
      }
      if (waited) this.metrics.waitDuration.observe({ mode: req.mode, outcome: result }, (performance.now() - started) / 1000)
    }
  }

  /** The grant made of a majority's hand-offs (`votes`), if still valid. */
  private async handedOver(req: AcquireRequest, waiter: Waiter, votes: HandOffVote[]): Promise<Won | undefined> {
    // REDIS_WAIT_REPLICAS: a push is no confirmation; the attempt that follows takes the hand-off up
    // on the waiter's own connection, and WAIT confirms it there (RedisNode.call).
    if (this.config.waitReplicas > 0) return undefined
    let fence = Math.max(...votes.map((v) => v.fence))
    if (votes.some((v) => v.fence !== fence)) {
      // As for an attempt: the fence is made this grant's alone on a majority first. If it cannot
      // be, the next attempt takes the handed holds up and decides.
      const committed = await this.commitFence(waiter.keys, storageOf(req.mode).hold, req.token, fence)
      if (committed === undefined) return undefined
      fence = committed
      votes = this.handOffVotes(waiter)
    }
    const elapsed = Math.max(...votes.map((v) => v.elapsedMs))
    const validity = validityMs(req.ttlMs, elapsed, this.config.driftFactor)
    // Too late to trust (a long sleep since the node last answered): an attempt takes it up afresh.
    if (votes.length < this.quorum.majority || validity <= 0) return undefined
    return {
      votedYes: new Set(votes.map((v) => this.quorum.nodes[v.index] as RedisNode)),
      grant: grantOf(req, { fence, ttlMs: req.ttlMs, validityMs: validity, since: Date.now() - elapsed, holdCount: 1, regranted: false }),
    }
  }

  /**
   * Label a handed-over hold with its owner and session (hold_label.lua) on every node that has it. A
   * session's hold must carry the session's reference on a majority (its keepalive renews only holds
   * that do); an owner is only a label.
   */
  private async label(keys: LockKeys, req: AcquireRequest): Promise<void> {
    const input = { hold: storageOf(req.mode).hold, token: req.token, owner: req.owner ?? '', sessionRef: req.sessionRef ?? '' }
    const tally = await this.quorum.ask((node) => node.call(holdLabelScript, keys.all, input))
    if (req.sessionRef && countCode(tally, ReplyCode.LABELLED) < tally.majority) {
      throw backendUnavailable(this.quorum, tally, 'no_majority')
    }
  }

  /** The hand-offs this waiter holds from nodes that may vote (the vote rule, as for any answer). */
  private handOffVotes(waiter: Waiter): HandOffVote[] {
    // A semaphore's: those that handed it the same slots (sameSlots).
    return sameSlots(waiter.handOffVotes(this.config.driftFactor).filter((v) => this.quorum.nodes[v.index]?.mayVote === true))
  }

  private async attempt(req: AcquireRequest, waiter?: Waiter): Promise<Attempt> {
    const started = performance.now()
    const grantedAt = Date.now()
    const attempt = nextAttemptId()
    // A waiter carries its lock's keys: computed once per request.
    const { keys, hold } = waiter ? { keys: waiter.keys, hold: storageOf(req.mode).hold } : this.keys(req.mode, req.key)
    const input: AcquireInput = {
      hold,
      token: req.token,
      ttlMs: req.ttlMs,
      reentrant: req.reentrant,
      attempt,
      waiterId: waiter?.id ?? '',
      place: waiter?.place ?? '',
      fenceHint: fenceHint(),
      keepTtl: req.keepTtl === true,
      permits: req.semaphore?.permits,
      limit: req.semaphore?.limit,
      proposal: '',
      owner: req.owner ?? '',
      sessionRef: req.sessionRef ?? '',
    }
    // A waiter notes each node's answer as it comes (also after the vote settled): what dates the
    // hand-offs it may be pushed next.
    const asked = waiter?.asking(started)
    const ask = (input: AcquireInput) =>
      this.quorum.ask((node) => {
        const call = node.call(acquireScript, keys.all, input)
        if (asked === undefined) return call
        return call.then(
          (reply) => {
            asked.answered(node.index, reply.code === ReplyCode.HELD ? reply.redisUs : undefined)
            return reply
          },
          (err: unknown) => {
            asked.answered(node.index, undefined)
            throw err
          },
        )
      }, settledForAttempt)
    let tally = await ask(input)
    const granting = grantingReplies(tally)
    let yes = agreeingOnSlots(granting)
    const proposal = req.semaphore ? slotsProposal(granting, yes, tally.majority) : undefined
    if (proposal !== undefined) {
      // A majority granted a semaphore's permits, in different slots: a second round asks every node
      // for the slots most of them named (the same attempt: its holds move there where they are free).
      tally = await ask({ ...input, proposal })
      yes = grantVotes(tally)
    }
    if (yes.length < tally.majority) {
      // After a second round, a node that refused it may still hold what it granted in the first.
      this.rollback(keys, hold, req.token, attempt, proposal === undefined ? tally : undefined)
      const held = heldReplies(tally)
      const error = refusal(this.quorum, tally, held, req.key, kindOf(req.mode), this.config)
      if (error.code !== 'lock_held') return refused(error)
      const split = held.length < tally.majority
      return refused(error, true, Math.min(...held.map((r) => r.wakeInMs)), split, held)
    }

    // Quorum mode: the fence is the largest the majority proposed, stored back on a majority before
    // anyone sees it. When every voter proposed the same fence (always, with one node), it is stored.
    let fence = Math.max(...yes.map((r) => r.fence))
    if (yes.some((r) => r.fence !== fence)) {
      const committed = await this.commitFence(keys, hold, req.token, fence)
      if (committed === undefined) {
        this.rollback(keys, hold, req.token, attempt)
        return refused(backendUnavailable(this.quorum, tally, 'fence_not_stored'))
      }
      fence = committed
    }

    // The TTL the scripts set: the request's, or on a re-grant without one, the hold's latest.
    const ttlMs = consensus(yes.map((r) => r.ttlMs))
    const validity = validityMs(ttlMs, performance.now() - started, this.config.driftFactor)
    if (validity <= 0) {
      this.rollback(keys, hold, req.token, attempt)
      return refused(backendUnavailable(this.quorum, tally, 'validity_expired'))
    }
    return {
      granted: true,
      hold,
      attempt,
      votedYes: new Set(tally.answers.filter((a) => a.ok && a.node.mayVote && a.value.code > 0).map((a) => a.node)),
      grant: grantOf(req, {
        fence,
        ttlMs,
        validityMs: validity,
        since: grantedAt,
        holdCount: Math.max(...yes.map((r) => r.holdCount)),
        regranted: yes.filter((r) => r.code === ReplyCode.REGRANTED).length >= tally.majority,
      }),
    }
  }

  async renew(req: RenewRequest): Promise<Grant> {
    const started = performance.now()
    const renewedAt = Date.now()
    const { keys, hold } = this.keys(req.mode, req.key)
    // A semaphore's hold is renewed only where a majority holds it in the same slots (renewalVotes): its
    // slots are what back its validity, so unlike a new hold's in an attempt they never move.
    const input = { hold, token: req.token, ttlMs: req.ttlMs ?? 0 }
    const tally = await this.quorum.ask((node) => node.call(renewScript, keys.all, input), settledForRenewal)
    const renewed = renewalVotes(tally)
    if (renewed.length < tally.majority) throw notHeld(this.quorum, tally, countedValues(tally), req.key, kindOf(req.mode))

    const ttlMs = consensus(renewed.map((r) => r.ttlMs))
    const validity = validityMs(ttlMs, performance.now() - started, this.config.driftFactor)
    if (validity <= 0) throw backendUnavailable(this.quorum, tally, 'validity_expired')
    const semaphore =
      req.mode === 'permit'
        ? { permits: consensus(renewed.map((r) => r.permits)), limit: consensus(renewed.map((r) => r.limit)) }
        : undefined
    return grantOf(semaphore ? { ...req, semaphore } : req, {
      fence: consensus(renewed.map((r) => r.fence)),
      ttlMs,
      validityMs: validity,
      since: renewedAt,
      holdCount: consensus(renewed.map((r) => r.holdCount)),
      regranted: true,
    })
  }

  async release(req: ReleaseRequest): Promise<Release> {
    const { keys, hold } = this.keys(req.mode, req.key)
    // The fence hint, for the hand-off to the next waiter: one value for every node, so they agree.
    const input = { hold, token: req.token, fenceHint: fenceHint() }
    const tally = await this.quorum.ask((node) => node.call(releaseScript, keys.all, input), settledByMajority)
    // Release reads every answer, voting or not: removing a hold is safe whoever reports it.
    const all = answeredValues(tally)
    const done = all.filter((r) => r.code > 0)
    if (done.length < tally.majority) throw notHeld(this.quorum, tally, all, req.key, kindOf(req.mode))
    const holdCount = consensus(done.map((r) => (r.code === ReplyCode.DECREMENTED ? r.holdCount : 0)))
    return { key: req.key, released: holdCount === 0, holdCount }
  }

  /** Operators: drop the write hold, or the read or semaphore hold with `fence`, whoever holds it. */
  async forceRelease(mode: LockMode, key: string, fence: number | undefined): Promise<Release> {
    const { keys, hold } = this.keys(mode, key)
    const input = { hold, fence: fence ?? 0, fenceHint: fenceHint() }
    const tally = await this.quorum.ask((node) => node.call(forceReleaseScript, keys.all, input))
    const answered = answeredValues(tally)
    if (answered.length < tally.majority) throw backendUnavailable(this.quorum, tally, 'no_majority')
    if (!answered.some((r) => r.dropped)) {
      const what = hold === 'write' ? 'write hold' : `${hold === 'read' ? 'read hold' : 'hold'} with fence ${fence}`
      throw fail.notFound(key, `no ${what} on ${kindOf(mode)} "${key}"`)
    }
    return { key, released: true, holdCount: 0 }
  }

  /** A page of held locks whose key starts with `prefix` (see listing.ts). */
  list(namespace: Namespace, prefix: string, limit: number, cursor: string | undefined): Promise<LockPage> {
    return listLocks(
      { quorum: this.quorum, keyPrefix: this.config.keyPrefix, inspect: (key) => this.inspect(namespace, key, namespace !== 'lock') },
      namespace,
      prefix,
      limit,
      cursor,
    )
  }

  /** The state a majority agrees on. A hold counts while a majority of its copies is live. */
  async inspect(namespace: Namespace, key: string, withReaders = false): Promise<LockState> {
    const keys = lockKeys(this.config.keyPrefix, namespace, key)
    const input = { withHolds: withReaders }
    const [tally, owners] = await Promise.all([
      this.quorum.ask((node) => node.call(inspectScript, keys.all, input), settledByCounted),
      holdOwners(this.quorum, keys),
    ])
    const all = countedValues(tally)
    if (all.length < tally.majority) throw backendUnavailable(this.quorum, tally, 'no_majority')
    const writers = all.filter((r) => r.writerFence > 0)
    return {
      writer:
        writers.length >= tally.majority
          ? {
              fence: consensus(writers.map((r) => r.writerFence)),
              remainingMs: majorityFloor(
                writers.map((r) => r.writerRemainingMs),
                tally.majority,
              ),
              holdCount: consensus(writers.map((r) => r.writerHoldCount)),
            }
          : null,
      readers: majorityFloor(
        all.map((r) => r.readers),
        tally.majority,
      ),
      waiters: Math.max(0, ...all.map((r) => r.waiters)),
      writerWaiting: all.some((r) => r.writersWaiting > 0),
      limit: consensus(all.flatMap((r) => (r.limit > 0 ? [r.limit] : []))),
      permitsInUse: majorityFloor(
        all.map((r) => r.permitsInUse),
        tally.majority,
      ),
      ...(withReaders ? { readerHolds: readerHolds(all, tally.majority) } : {}),
      owners,
    }
  }

  /**
   * Undo an attempt on every node that may have applied it (nodes that refused changed nothing),
   * timed-out ones included: their acquire may still run, and the rollback is queued behind it on the
   * same connection. Not awaited, so a failed acquire answers within one node timeout.
   */
  private rollback(keys: LockKeys, hold: HoldKind, token: string, attempt: string, tally?: Tally<AcquireReply>): void {
    const untouched = new Set<RedisNode>()
    for (const a of tally?.answers ?? []) if (a.ok && a.value.code < 0) untouched.add(a.node)
    // A plain refusal (every node said no) has nothing to undo: the hot path of a contended lock.
    if (untouched.size === this.quorum.size) return
    const input = { hold, token, attempt, fenceHint: fenceHint() }
    for (const node of this.quorum.nodes) {
      if (!untouched.has(node)) node.call(rollbackScript, keys.all, input).catch(() => undefined)
    }
  }

  /**
   * Make `fence` this grant's alone on a majority (fence_commit.lua); where a node's counter already
   * reached it (a concurrent grant of a shared hold proposed it there), try above the highest counter
   * seen. Returns the fence committed, or undefined when no majority answered.
   */
  private async commitFence(keys: LockKeys, hold: HoldKind, token: string, fence: number): Promise<number | undefined> {
    for (let round = 0; round < FENCE_COMMIT_ROUNDS; round++) {
      const input = { hold, token, fence }
      const tally = await this.quorum.ask(
        (node) => node.call(fenceCommitScript, keys.all, input),
        (t) => countCode(t, ReplyCode.COMMITTED) >= t.majority,
      )
      if (countCode(tally, ReplyCode.COMMITTED) >= tally.majority) return fence
      const taken = countedValues(tally).flatMap((r) => (r.code === ReplyCode.FENCE_TAKEN ? [r.counter] : []))
      if (taken.length === 0) return undefined
      fence = Math.max(fence, ...taken) + 1
    }
    return undefined
  }
}

/** An attempt that did not grant: `retry` (held) says a waiter may try again, after `wakeInMs` or a push. */
function refused(error: ServiceError, retry = false, wakeInMs = 0, split = false, held?: readonly Held[]): Attempt {
  return { granted: false, error, retry, wakeInMs, split, ...(held ? { held } : {}) }
}

/**
 * A 409 lock_held names the owner labels of the holds in the way (acquire.lua's HELD replies), as
 * the node that names the most of them says; never a token.
 */
function withOwners(error: ServiceError, held: readonly Held[] | undefined): ServiceError {
  if (error.code !== 'lock_held' || !held) return error
  let owners: readonly string[] = []
  for (const reply of held) if (reply.owners.length > owners.length) owners = reply.owners
  return owners.length > 0 ? fail.withDetails(error, { owners: [...owners] }) : error
}

/**
 * How long (ms, up to twice that at random) a waiter holding hand-offs from a minority of nodes waits
 * for the others' before it attempts: most follow within a few ms, nearly all within 75 ms on a busy
 * machine; pushes that never come cost every waiter of the split this long.
 */
const HANDOFF_FOLLOW_MS = 50

/** Rounds a fence commit may take when concurrent shared holds keep taking the fence it tries. */
const FENCE_COMMIT_ROUNDS = 5

/** The answer for one hold of `req`'s token; it expires `ttlMs` after `since` (wall clock, ms). */
function grantOf(
  req: { key: string; mode: LockMode; token: string; semaphore?: Permits },
  hold: { fence: number; ttlMs: number; validityMs: number; since: number; holdCount: number; regranted: boolean },
): Grant {
  return {
    key: req.key,
    mode: req.mode,
    token: req.token,
    fence: hold.fence,
    ttlMs: hold.ttlMs,
    validityMs: hold.validityMs,
    expiresAt: isoTime(hold.since + hold.ttlMs),
    holdCount: hold.holdCount,
    ...(req.semaphore ? { permits: req.semaphore.permits, limit: req.semaphore.limit } : {}),
    regranted: hold.regranted,
  }
}

// Attempt ids only need to be unique among the attempts on one lock.
const nextAttemptId = sequentialIds(6)
