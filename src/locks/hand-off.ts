import { performance } from 'node:perf_hooks'
import { fail } from '../errors.js'
import type { RedisNode } from '../redis/node.js'
import { ReplyCode } from '../redis/scripts.js'
import { attempt, commitFence, rollback, withOwners, type Attempt, type Won } from './attempt.js'
import { grantOf } from './grant.js'
import { noteDelayed } from './lock-delay.js'
import type { LockKeys } from './keys.js'
import { keysOf, type LockContext } from './lock-context.js'
import { holdLabelScript } from './scripts/hold_label.js'
import { sameSlots } from './slots.js'
import { storageOf, type AcquireRequest, type Grant } from './types.js'
import { validityMs } from './validity.js'
import { backendUnavailable, countCode } from './votes.js'
import type { HandOffVote, Waiter } from './waiting.js'

/**
 * An acquire that waits in line (waitMs > 0): granted after a release hands the lock over or an
 * expiry lets it through, or refused when the wait runs out. A grant that races the client hanging
 * up is given back.
 */
export async function acquireWaiting(ctx: LockContext, req: AcquireRequest, waitMs: number): Promise<Grant> {
  const { quorum, config, room, metrics } = ctx
  const { hold } = storageOf(req.mode)
  const started = performance.now()
  const deadline = started + waitMs
  // From here on waiter.keys: the waiters of one lock share one LockKeys.
  const waiter = room.park(keysOf(ctx, req.mode, req.key).keys, req.clientGone)
  let won: Won | undefined
  let waited = false
  let delayed = false
  let result: 'granted' | 'timeout' | 'cancelled' = 'cancelled'
  let outcome: Attempt | undefined
  try {
    while (!won) {
      outcome = await attempt(ctx, req, waiter)
      if (outcome.granted) {
        won = outcome
        break
      }
      if (!outcome.retry) throw outcome.error
      if (!delayed && outcome.error.code === 'lock_delayed') {
        delayed = true
        noteDelayed(metrics, req.mode, outcome.error)
      }
      waited = true
      // The latest refusal with its owners is all a parked request keeps of its attempt (the held
      // replies and the rest are let go before it sleeps): what a wait that runs out answers.
      const refusal = withOwners(outcome.error, outcome.held)
      if (performance.now() >= deadline) {
        result = 'timeout'
        throw fail.afterWaiting(refusal, performance.now() - started)
      }
      // Asleep in line until a push, until the holds ahead lapse (wakeInMs), or until the wait runs
      // out; a split vote retries after a random pause (quorum mode). A push may be the lock itself,
      // handed over by a release: from a majority of nodes that is the grant, with no further round
      // trip. Anything else: look again. (One loop here rather than a helper: every parked request
      // keeps its async frames, ~0.5 KB each.)
      let nap = outcome.split ? 5 + Math.random() * 45 : outcome.wakeInMs > 0 ? outcome.wakeInMs + 1 : Infinity
      outcome = undefined
      for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
        const why = await waiter.sleep(Math.min(nap, left))
        if (why === 'aborted') throw room.abortReason() ?? refusal
        const votes = handOffVotes(ctx, waiter)
        won = votes.length >= quorum.majority ? await handedOver(ctx, req, waiter, votes) : undefined
        // A majority handed a semaphore's permits over in different slots: an attempt (two rounds) decides.
        const disagree = waiter.handOffCount >= quorum.majority
        if (won || why !== 'woken' || waiter.handOffCount === 0 || votes.length >= quorum.majority || disagree) break
        // Some nodes handed over, not yet a majority: give the others a moment to follow (the release
        // behind the push ran on every node at once). Not a node timeout: the nodes may have handed
        // the rest to other waiters (their lines differ after a failed attempt), each of them with a
        // minority too, and nobody holding anything that a release could pass on; then only an
        // attempt (its rollback hands the hold on) moves the line. A random pause, as after a split
        // vote, so that waiters split on one release do not all attempt at once.
        nap = Math.min(config.nodeTimeoutMs, HANDOFF_FOLLOW_MS + Math.random() * HANDOFF_FOLLOW_MS)
      }
    }
    // A grant that raced the client hanging up (or shutdown) is given back in `finally`.
    if (waiter.aborted) throw room.abortReason() ?? fail.clientGone()
    if (waiter.wokenAt !== undefined) metrics.handoffSeries.observe((performance.now() - waiter.wokenAt) / 1000)
    // A hold handed over carries the waiter's token and TTL only: its labels follow.
    if (won.attempt === undefined && (req.owner || req.sessionRef)) await label(ctx, waiter.keys, req)
    result = 'granted'
    return won.grant
  } finally {
    if (result === 'granted' && won) {
      // The granting scripts took the waiter out of line on the nodes that granted.
      const granted = won.votedYes
      room.leave(
        waiter,
        quorum.nodes.filter((n) => !granted.has(n)),
      )
    } else {
      if (won?.attempt) rollback(ctx, waiter.keys, hold, req.token, won.attempt)
      room.leave(waiter, undefined, { hold, token: req.token })
    }
    if (waited) metrics.waitDurationOf(req.mode, result).observe((performance.now() - started) / 1000)
  }
}

/** The grant made of a majority's hand-offs (`votes`), if still valid. */
async function handedOver(ctx: LockContext, req: AcquireRequest, waiter: Waiter, votes: HandOffVote[]): Promise<Won | undefined> {
  const { quorum, config } = ctx
  // REDIS_WAIT_REPLICAS: a push is no confirmation; the attempt that follows takes the hand-off up
  // on the waiter's own connection, and WAIT confirms it there (RedisNode.call).
  if (config.waitReplicas > 0) return undefined
  let fence = Math.max(...votes.map((v) => v.fence))
  if (votes.some((v) => v.fence !== fence)) {
    // As for an attempt: the fence is made this grant's alone on a majority first. If it cannot
    // be, the next attempt takes the handed holds up and decides.
    const committed = await commitFence(ctx, waiter.keys, storageOf(req.mode).hold, req.token, fence)
    if (committed === undefined) return undefined
    fence = committed
    votes = handOffVotes(ctx, waiter)
  }
  const elapsed = Math.max(...votes.map((v) => v.elapsedMs))
  const validity = validityMs(req.ttlMs, elapsed, config.driftFactor)
  // Too late to trust (a long sleep since the node last answered): an attempt takes it up afresh.
  if (votes.length < quorum.majority || validity <= 0) return undefined
  return {
    votedYes: new Set(votes.map((v) => quorum.nodes[v.index] as RedisNode)),
    grant: grantOf(req, { fence, ttlMs: req.ttlMs, validityMs: validity, since: Date.now() - elapsed, holdCount: 1, regranted: false }),
  }
}

/**
 * Label a handed-over hold with its owner and session (hold_label.lua) on every node that has it. A
 * session's hold must carry the session's reference on a majority (its keepalive renews only holds
 * that do); an owner is only a label.
 */
async function label(ctx: LockContext, keys: LockKeys, req: AcquireRequest): Promise<void> {
  const input = { hold: storageOf(req.mode).hold, token: req.token, owner: req.owner ?? '', sessionRef: req.sessionRef ?? '' }
  const tally = await ctx.quorum.ask((node) => node.call(holdLabelScript, keys.all, input))
  if (req.sessionRef && countCode(tally, ReplyCode.LABELLED) < tally.majority) {
    throw backendUnavailable(ctx.quorum, tally, 'no_majority')
  }
}

/** The hand-offs this waiter holds from nodes that may vote (the vote rule, as for any answer). */
function handOffVotes(ctx: LockContext, waiter: Waiter): HandOffVote[] {
  // A semaphore's: those that handed it the same slots (sameSlots).
  return sameSlots(waiter.handOffVotes(ctx.config.driftFactor).filter((v) => ctx.quorum.nodes[v.index]?.mayVote === true))
}

/**
 * How long (ms, up to twice that at random) a waiter holding hand-offs from a minority of nodes waits
 * for the others' before it attempts: most follow within a few ms, nearly all within 75 ms on a busy
 * machine; pushes that never come cost every waiter of the split this long.
 */
const HANDOFF_FOLLOW_MS = 50
