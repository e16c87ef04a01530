import type { QuorumFailureReason } from '../contract/words.js'
import { fail, RETRY_AFTER_MS, type Kind, type ServiceError } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import type { AcquireReply, Granted, Held } from './scripts/acquire.js'
import type { Renewed, RenewReply } from './scripts/renew.js'
import { isoTime } from './iso-time.js'
import { agreeingOnSlots } from './slots.js'

/**
 * Reading the nodes' decoded answers (src/locks/scripts/): which count (the vote rule), what a
 * majority of them says, and the error when it says no. The engine decides what to do next; this
 * module only interprets.
 */

/** A decoded reply whose script answers with a code first (src/redis/scripts.ts ReplyCode). */
export interface Coded {
  readonly code: number
}

/**
 * The answers that count toward a majority: from nodes the vote rule lets vote now (RedisNode.vote:
 * up, identified, not quarantined after a restart, clock trusted). Every path that decides by
 * majority — attempt, hand-off, renew, fence commit, inspect — counts through here. Only release and
 * force-release read every answer (see `answeredValues`): removing a hold is safe whoever says so.
 */
export function countedValues<T>(tally: Tally<T>): T[] {
  // Loops rather than flatMap in this module: every request reads its answers several times.
  const values: T[] = []
  for (const a of tally.answers) if (a.ok && a.node.mayVote) values.push(a.value)
  return values
}

/** Every answer, voting or not: for release, where the answer only reports what was removed. */
export function answeredValues<T>(tally: Tally<T>): T[] {
  const values: T[] = []
  for (const a of tally.answers) if (a.ok) values.push(a.value)
  return values
}

/** Counted answers with this code. */
export function countCode(tally: Tally<Coded>, code: number): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && a.node.mayVote && a.value.code === code) n++
  return n
}

/** Counted answers of any kind (a fence commit's OK included). */
export function countedAnswers(tally: Tally<unknown>): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && a.node.mayVote) n++
  return n
}

/**
 * For a read (inspect, owners, a session's hold state, a watch's look): settled only once every node
 * has answered or failed (each within the node timeout). The first majority to answer may be two
 * nodes that each missed different grants (a node cut off meanwhile): settling on them would call a
 * hold free that a majority has, and tell its holder's watch that it was lost.
 */
export function settledByEveryNode(): boolean {
  return false
}

/**
 * The most that a majority of the nodes vouch for: the majority-th largest of their values (0 when
 * fewer than a majority gave one). E.g. how long a hold still lasts on a majority.
 */
export function majorityFloor(values: readonly number[], majority: number): number {
  return [...values].sort((a, b) => b - a)[majority - 1] ?? 0
}

/** The value most replies agree on (ties: the largest). */
export function consensus(values: readonly number[]): number {
  // Nearly always every value is the same (always, with one node).
  if (values.every((v) => v === values[0])) return values[0] ?? 0
  const seen = new Map<number, number>()
  let best = values[0] ?? 0
  for (const v of values) {
    const n = (seen.get(v) ?? 0) + 1
    seen.set(v, n)
    const bestCount = seen.get(best) ?? 0
    if (n > bestCount || (n === bestCount && v > best)) best = v
  }
  return best
}

/** Counted grants and re-grants, in whatever slots. */
export function grantingReplies(tally: Tally<AcquireReply>): Granted[] {
  const granted: Granted[] = []
  for (const a of tally.answers) {
    if (a.ok && a.node.mayVote && (a.value.code === ReplyCode.GRANTED || a.value.code === ReplyCode.REGRANTED)) granted.push(a.value)
  }
  return granted
}

/** The granting replies that count together: a majority of them makes a grant. */
export function grantVotes(tally: Tally<AcquireReply>): Granted[] {
  return agreeingOnSlots(grantingReplies(tally))
}

/** The renewing replies that count together: a majority of them makes a renewal. */
export function renewalVotes(tally: Tally<RenewReply>): Renewed[] {
  const renewed: Renewed[] = []
  for (const a of tally.answers) if (a.ok && a.node.mayVote && a.value.code === ReplyCode.RENEWED) renewed.push(a.value)
  return agreeingOnSlots(renewed)
}

/** For an attempt: settle as soon as a majority granted (in the same slots), or a majority refused. */
export function settledForAttempt(t: Tally<AcquireReply>): boolean {
  // Asked on every arrival: one pass over the answers, and grantVotes' grouping by slots only when a
  // reply names slots (a semaphore's); without slots every granting reply is in one group.
  let granted = 0
  let refused = 0
  let slots = false
  for (const a of t.answers) {
    if (!a.ok || !a.node.mayVote) continue
    const reply = a.value
    if (reply.code < 0) refused++
    else if (reply.code === ReplyCode.GRANTED || reply.code === ReplyCode.REGRANTED) {
      granted++
      if (reply.slots !== '') slots = true
    }
  }
  return (slots ? grantVotes(t).length : granted) >= t.majority || refused >= t.majority
}

/** For renew: settle as soon as a majority renewed (in the same slots), or a majority agrees on a refusal. */
export function settledForRenewal(t: Tally<RenewReply>): boolean {
  let renewed = 0
  let notFound = 0
  let notOwner = 0
  let slots = false
  for (const a of t.answers) {
    if (!a.ok || !a.node.mayVote) continue
    const reply = a.value
    if (reply.code === ReplyCode.RENEWED) {
      renewed++
      if (reply.slots !== '') slots = true
    } else if (reply.code === ReplyCode.NOT_FOUND) notFound++
    else notOwner++
  }
  return (slots ? renewalVotes(t).length : renewed) >= t.majority || notFound >= t.majority || notOwner >= t.majority
}

/** For release: settle as soon as a majority did it (released, or one reentrant hold dropped), or agrees on a refusal. */
export function settledByMajority(t: Tally<Coded>): boolean {
  // A majority agreeing on one positive answer is a majority that did it: one count for both.
  let did = 0
  let notFound = 0
  let notOwner = 0
  for (const a of t.answers) {
    if (!a.ok || !a.node.mayVote) continue
    const code = a.value.code
    if (code > 0) did++
    else if (code === ReplyCode.NOT_FOUND) notFound++
    else if (code === ReplyCode.NOT_OWNER) notOwner++
  }
  return did >= t.majority || notFound >= t.majority || notOwner >= t.majority
}

/**
 * Why an acquire was not granted: a refused mode, limit or number of permits, a conflicting hold (or
 * split vote), or no majority. `held`: the tally's counted HELD replies (heldReplies), which the
 * caller also needs for a refusal that may wait.
 */
export function refusal(
  quorum: Quorum,
  tally: Tally<AcquireReply>,
  held: readonly Held[],
  key: string,
  kind: Kind,
  limits: { maxWaiters: number; maxReaders: number },
): ServiceError {
  // The common refusal (every 409 comes through here): a majority says held.
  if (held.length < tally.majority) {
    // The counted replies, read once.
    const counted = countedValues(tally)
    const count = (code: number) => counted.reduce((n, r) => (r.code === code ? n + 1 : n), 0)
    if (count(ReplyCode.UPGRADE) >= tally.majority) return fail.upgradeNotSupported(key)
    const limitsSeen = counted.flatMap((r) => (r.code === ReplyCode.LIMIT_MISMATCH ? [r.limit] : []))
    if (limitsSeen.length >= tally.majority) return fail.limitMismatch(key, consensus(limitsSeen))
    const permitsSeen = counted.flatMap((r) => (r.code === ReplyCode.PERMITS_MISMATCH ? [r.permits] : []))
    if (permitsSeen.length >= tally.majority) return fail.permitsMismatch(key, consensus(permitsSeen))
    if (count(ReplyCode.TOO_MANY_WAITERS) >= tally.majority) {
      return fail.tooManyWaiters(`${kind} "${key}" already has the most waiters allowed (${limits.maxWaiters}, MAX_WAITERS)`, { key })
    }
    if (count(ReplyCode.TOO_MANY_READERS) >= tally.majority) return fail.tooManyReaders(key, limits.maxReaders)
    if (tally.size - counted.length > tally.size - tally.majority) return backendUnavailable(quorum, tally, 'no_majority')
  }
  // When a majority of the held copies will have lapsed: the earliest the lock can be free.
  const retryAfterMs = Math.max(1, majorityLapse(held) ?? RETRY_AFTER_MS.held)
  // Lock-delay decides as a grant would: a majority of the nodes is in it. In a split vote (no
  // majority either way) whose refusals are all delays, nothing holds it: the delay is the reason.
  const delayed = held.filter((r) => r.delayed)
  if (delayed.length >= tally.majority || (delayed.length > 0 && delayed.length === held.length)) {
    const delayedMs = majorityLapse(delayed) ?? retryAfterMs
    return fail.delayed(key, jittered(delayedMs), isoTime(Date.now() + delayedMs), kind)
  }
  return fail.held(key, retryAfterMs, kind)
}

/** When a majority of these refusals' reasons will have lapsed (undefined: no refusal). */
function majorityLapse(held: readonly Held[]): number | undefined {
  const remaining = held.map((r) => r.retryAfterMs).sort((a, b) => a - b)
  return remaining[Math.min(remaining.length, Math.floor(remaining.length / 2) + 1) - 1]
}

/**
 * A lock-delay's retry hint: its end plus up to a fifth of it more (at least 50 ms, at most 1 s), at
 * random, so that clients refused by one delay do not all come back at the same moment.
 */
export function jittered(delayedMs: number): number {
  return Math.ceil(delayedMs + Math.random() * Math.min(1000, Math.max(50, delayedMs / 5)))
}

/** Counted "held by another" answers. */
export function heldReplies(tally: Tally<AcquireReply>): Held[] {
  const held: Held[] = []
  for (const a of tally.answers) if (a.ok && a.node.mayVote && a.value.code === ReplyCode.HELD) held.push(a.value)
  return held
}

/** Why a renew or release found no majority of holds (`answers`: those it counts): someone else's, gone, or undecidable. */
export function notHeld(quorum: Quorum, tally: Tally<unknown>, answers: readonly Coded[], key: string, kind: Kind): ServiceError {
  const notOwner = answers.filter((r) => r.code === ReplyCode.NOT_OWNER).length
  const notFound = answers.filter((r) => r.code === ReplyCode.NOT_FOUND).length
  if (notOwner + notFound < tally.majority && tally.size - answers.length > tally.size - tally.majority) {
    return backendUnavailable(quorum, tally, 'no_majority')
  }
  if (notOwner > notFound) return fail.notOwner(key, kind)
  return fail.notFound(key, `${kind} "${key}" is not held by this token (it expired or was released)`)
}

export function backendUnavailable(quorum: Quorum, tally: Tally<unknown> | undefined, reason: QuorumFailureReason): ServiceError {
  quorum.metrics.quorumFailures.inc({ reason })
  const answered = tally ? tally.answers.filter((a) => a.ok).length : 0
  const voting = tally ? countedAnswers(tally) : 0
  const message =
    reason === 'validity_expired'
      ? 'the Redis nodes answered too slowly for the lock to be valid; nothing was granted'
      : reason === 'fence_not_stored'
        ? 'the fencing token could not be stored on a majority of Redis nodes; nothing was granted'
        : voting < answered
          ? `the lock backend could not decide: ${answered} of ${quorum.size} Redis nodes answered but only ${voting} may vote now ` +
            `(a node that restarted recently or whose clock is not trusted does not count), ${quorum.majority} needed`
          : `the lock backend could not decide: ${answered} of ${quorum.size} Redis nodes answered, ${quorum.majority} needed`
  return fail.backendUnavailable(message, { reason, nodes: quorum.describe(tally), answered, voting, needed: quorum.majority })
}
