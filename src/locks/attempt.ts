import { performance } from 'node:perf_hooks'
import { fail, type ServiceError } from '../errors.js'
import type { Answer, Tally } from '../redis/quorum.js'
import type { RedisNode } from '../redis/node.js'
import { ReplyCode } from '../redis/scripts.js'
import { sequentialIds } from '../random.js'
import { fenceHint } from './fence-hint.js'
import { grantOf } from './grant.js'
import { noteDelayed } from './lock-delay.js'
import type { LockKeys } from './keys.js'
import { keysOf, type LockContext } from './lock-context.js'
import { acquireScript, type AcquireInput, type AcquireReply, type Held } from './scripts/acquire.js'
import { fenceCommitScript } from './scripts/fence_commit.js'
import { rollbackScript } from './scripts/rollback.js'
import { agreeingOnSlots, slotsProposal } from './slots.js'
import { kindOf, storageOf, type AcquireRequest, type Grant, type HoldKind } from './types.js'
import { validityMs } from './validity.js'
import {
  backendUnavailable,
  consensus,
  countCode,
  countedValues,
  grantingReplies,
  grantVotes,
  heldReplies,
  refusal,
  settledForAttempt,
} from './votes.js'
import type { Waiter } from './waiting.js'

/** A grant and the nodes that voted for it; `attempt`: the attempt id, when an attempt made it. */
export interface Won {
  grant: Grant
  votedYes: Set<RedisNode>
  attempt?: string
}

export type Attempt =
  | ({ granted: true; hold: HoldKind; attempt: string } & Won)
  | { granted: false; error: ServiceError; retry: boolean; wakeInMs: number; split: boolean; held?: readonly Held[] }

/**
 * An acquire that does not wait (or finds no room to): one attempt. A grant that raced the client
 * hanging up is given back at once. A refusal comes back as a value (LockEngine.acquire says why).
 */
export async function acquireOnce(ctx: LockContext, req: AcquireRequest): Promise<Grant | ServiceError> {
  const first = await attempt(ctx, req)
  if (first.granted) {
    if (req.clientGone?.gone) {
      rollback(ctx, keysOf(ctx, req.mode, req.key).keys, first.hold, req.token, first.attempt)
      throw fail.clientGone()
    }
    return first.grant
  }
  if (req.waitMs && first.retry) throw ctx.room.noRoom()
  if (first.error.code === 'lock_delayed') noteDelayed(ctx.metrics, req.mode, first.error)
  return withOwners(first.error, first.held)
}

/**
 * One attempt on every node (acquire.lua), and what makes it a grant: a majority granting (a
 * semaphore's in the same slots, after a second round if need be), the fence committed on a majority
 * when the voters proposed different ones, and validity left. Anything else is rolled back.
 */
export async function attempt(ctx: LockContext, req: AcquireRequest, waiter?: Waiter): Promise<Attempt> {
  const { quorum, config } = ctx
  const started = performance.now()
  const grantedAt = Date.now()
  const attemptId = nextAttemptId()
  // A waiter carries its lock's keys: computed once per request.
  const { keys, hold } = waiter ? { keys: waiter.keys, hold: storageOf(req.mode).hold } : keysOf(ctx, req.mode, req.key)
  const input: AcquireInput = {
    hold,
    token: req.token,
    ttlMs: req.ttlMs,
    reentrant: req.reentrant,
    attempt: attemptId,
    waiterId: waiter?.id ?? '',
    place: waiter?.place ?? '',
    fenceHint: fenceHint(),
    keepTtl: req.keepTtl === true,
    permits: req.semaphore?.permits,
    limit: req.semaphore?.limit,
    proposal: '',
    owner: req.owner ?? '',
    sessionRef: req.sessionRef ?? '',
    lockDelayMs: req.lockDelayMs ?? 0,
  }
  // A waiter notes each node's answer as it comes (also after the vote settled): what dates the
  // hand-offs it may be pushed next.
  const asked = waiter?.asking(started)
  const ask = (input: AcquireInput) =>
    quorum.ask((node) => {
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
    rollback(ctx, keys, hold, req.token, attemptId, proposal === undefined ? tally : undefined)
    const held = heldReplies(tally)
    const error = refusal(quorum, tally, held, req.key, kindOf(req.mode), config)
    // Held, or free but for a lock-delay: a waiter sleeps until the holds or the delay lapse, or a push.
    if (error.code !== 'lock_held' && error.code !== 'lock_delayed') return refused(error)
    const split = held.length < tally.majority
    return refused(error, true, Math.min(...held.map((r) => r.wakeInMs)), split, held)
  }

  // Quorum mode: the fence is the largest the majority proposed, stored back on a majority before
  // anyone sees it. When every voter proposed the same fence (always, with one node), it is stored.
  let fence = Math.max(...yes.map((r) => r.fence))
  if (yes.some((r) => r.fence !== fence)) {
    const committed = await commitFence(ctx, keys, hold, req.token, fence)
    if (committed === undefined) {
      rollback(ctx, keys, hold, req.token, attemptId)
      return refused(backendUnavailable(quorum, tally, 'fence_not_stored'))
    }
    fence = committed
  }

  // The TTL the scripts set: the request's, or on a re-grant without one, the hold's latest.
  const ttlMs = consensus(yes.map((r) => r.ttlMs))
  const validity = validityMs(ttlMs, performance.now() - started, config.driftFactor)
  if (validity <= 0) {
    rollback(ctx, keys, hold, req.token, attemptId)
    return refused(backendUnavailable(quorum, tally, 'validity_expired'))
  }
  return {
    granted: true,
    hold,
    attempt: attemptId,
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

/**
 * Undo an attempt on every node that may have applied it (nodes that refused changed nothing),
 * timed-out ones included: their acquire may still run, and the rollback is queued behind it on the
 * same connection. Not awaited, so a failed acquire answers within one node timeout.
 *
 * `tally`: the vote that refused the attempt. A node it settled without (a majority had refused
 * already) is undone once its answer comes, and only if it applied the attempt: on a quorum a refused
 * attempt's slowest node refuses it too, nearly always (a contended lock, a waiter joining a hot key's
 * line), and needs no rollback.
 */
export function rollback(
  ctx: LockContext,
  keys: LockKeys,
  hold: HoldKind,
  token: string,
  attempt: string,
  tally?: Tally<AcquireReply>,
): void {
  const answers = tally?.answers ?? []
  // A plain refusal (every node said no) has nothing to undo: the hot path of a contended lock.
  if (answers.length === ctx.quorum.size && answers.every(refusedIt)) return
  const input = { hold, token, attempt, fenceHint: fenceHint() }
  const undo = (node: RedisNode) => void node.call(rollbackScript, keys.all, input).catch(() => undefined)
  ctx.quorum.nodes.forEach((node, i) => {
    const answer = answers.find((a) => a.node === node)
    if (answer) {
      if (!refusedIt(answer)) undo(node)
      return
    }
    const late = tally?.calls?.[i]
    if (!late) return undo(node)
    late.then(
      (reply) => reply.code >= 0 && undo(node),
      () => undo(node),
    )
  })
}

/** The node answered and refused the attempt: it changed nothing. */
const refusedIt = (answer: Answer<AcquireReply>) => answer.ok && answer.value.code < 0

/**
 * Make `fence` this grant's alone on a majority (fence_commit.lua); where a node's counter already
 * reached it (a concurrent grant of a shared hold proposed it there), try above the highest counter
 * seen. Returns the fence committed, or undefined when no majority answered.
 */
export async function commitFence(
  ctx: LockContext,
  keys: LockKeys,
  hold: HoldKind,
  token: string,
  fence: number,
): Promise<number | undefined> {
  for (let round = 0; round < FENCE_COMMIT_ROUNDS; round++) {
    const input = { hold, token, fence }
    const tally = await ctx.quorum.ask(
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

/** An attempt that did not grant: `retry` (held) says a waiter may try again, after `wakeInMs` or a push. */
function refused(error: ServiceError, retry = false, wakeInMs = 0, split = false, held?: readonly Held[]): Attempt {
  return { granted: false, error, retry, wakeInMs, split, ...(held ? { held } : {}) }
}

/**
 * A 409 lock_held names the owner labels of the holds in the way (acquire.lua's HELD replies), as
 * the node that names the most of them says; never a token.
 */
export function withOwners(error: ServiceError, held: readonly Held[] | undefined): ServiceError {
  if (error.code !== 'lock_held' || !held) return error
  let owners: readonly string[] = []
  for (const reply of held) if (reply.owners.length > owners.length) owners = reply.owners
  return owners.length > 0 ? fail.withDetails(error, { owners: [...owners] }) : error
}

/** Rounds a fence commit may take when concurrent shared holds keep taking the fence it tries. */
const FENCE_COMMIT_ROUNDS = 5

// Attempt ids only need to be unique among the attempts on one lock.
const nextAttemptId = sequentialIds(6)
