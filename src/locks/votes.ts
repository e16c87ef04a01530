import type { QuorumFailureReason } from '../contract/words.js'
import { fail, RETRY_AFTER_MS, type Kind, type ServiceError } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { Refused, Renewed } from '../redis/scripts.js'

/**
 * Reading the nodes' answers: which count (the vote rule), what a majority of them says, and the
 * error when it says no. The engine decides what to do next; this module only interprets.
 */

/** Script replies are arrays of integers whose first slot is a code (src/redis/scripts.ts). */
export type Reply = readonly number[]

const did = (code: number) => code > 0
const is = (wanted: number) => (code: number) => code === wanted

/**
 * The replies that count toward a majority: from nodes the vote rule lets vote now (RedisNode.vote:
 * up, identified, not quarantined after a restart, clock trusted). Every path that decides by
 * majority — attempt, hand-off, renew, fence commit, inspect — counts through here. Only release and
 * force-release read every answer (see `anyReplies`): removing a hold is safe whoever says so.
 */
export const replies: (tally: Tally<Reply>) => Reply[] = countedValues

/** Every reply, voting or not: for release, where the answer only reports what was removed. */
export function anyReplies(tally: Tally<Reply>): Reply[] {
  // Loops rather than flatMap in this module: every request reads its answers several times.
  const values: Reply[] = []
  for (const a of tally.answers) if (a.ok) values.push(a.value)
  return values
}

/** Counted replies whose code passes `test`. */
export function countWhere(tally: Tally<Reply>, test: (code: number) => boolean): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && a.node.mayVote && test(a.value[0] ?? 0)) n++
  return n
}

/** Counted answers of any kind (a fence commit's OK included). */
export function countedAnswers(tally: Tally<unknown>): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && a.node.mayVote) n++
  return n
}

/** For a read (inspect, a watch's look): settle once a majority of counted answers is in, whatever they say. */
export function settledByCounted(t: Tally<unknown>): boolean {
  return countedAnswers(t) >= t.majority
}

/** Nodes whose answer does not count: failed, never answered before the vote settled, or may not vote. */
export function failures(tally: Tally<unknown>): number {
  return tally.size - countedAnswers(tally)
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

/** Counted answers that did what was asked (granted, renewed, released, …). */
export function yesVotes(tally: Tally<Reply>): Reply[] {
  return replies(tally).filter((r) => did(r[0] ?? 0))
}

/** How many fixed fields an acquire's and a renew's reply have; a semaphore's hold names its slots after them. */
export const ACQUIRE_FIELDS = 4
export const RENEW_FIELDS = 6

/** The slots a reply names after its `fixed` fields ('' for any hold but a semaphore's). */
export function slotsOf(reply: Reply, fixed: number): string {
  return reply.slice(fixed).join(',')
}

/**
 * The largest group of `items` naming the same slots. A semaphore's hold counts only where a
 * majority holds it in the same slots (src/lua/include/holds.lua): a slot is one token's at a time
 * on a node, so no two holds can both be valid in one slot. Other holds name none: one group.
 */
export function sameSlots<T>(items: readonly T[], slots: (item: T) => string): T[] {
  const groups = new Map<string, T[]>()
  let best: T[] = []
  for (const item of items) {
    const key = slots(item)
    const group = groups.get(key) ?? []
    group.push(item)
    groups.set(key, group)
    if (group.length > best.length) best = group
  }
  return best
}

/**
 * Quorum mode, a semaphore: when a majority did it (`all`) but no majority named the same slots
 * (`agreeing`, the largest group), the slots to ask every node for in a second round; else undefined.
 */
export function slotsProposal(all: readonly Reply[], agreeing: readonly Reply[], majority: number, fixed: number): string | undefined {
  if (all.length < majority || agreeing.length >= majority || agreeing[0] === undefined) return undefined
  return slotsOf(agreeing[0], fixed)
}

/** The granting replies that count together: a majority of them makes a grant. */
export function grantVotes(tally: Tally<Reply>): Reply[] {
  return agreeingOnSlots(yesVotes(tally), ACQUIRE_FIELDS)
}

/** The renewing replies that count together: a majority of them makes a renewal. */
export function renewVotes(tally: Tally<Reply>): Reply[] {
  return agreeingOnSlots(
    replies(tally).filter((r) => r[0] === Renewed.RENEWED),
    RENEW_FIELDS,
  )
}

/** sameSlots over the slots each reply names after its `fixed` fields; when none names any (all but a semaphore's), all of them. */
function agreeingOnSlots(replies: Reply[], fixed: number): Reply[] {
  return replies.some((r) => r.length > fixed) ? sameSlots(replies, (r) => slotsOf(r, fixed)) : replies
}

/** For an attempt: settle as soon as a majority granted (in the same slots), or a majority refused. */
export function settledForAttempt(t: Tally<Reply>): boolean {
  // Asked on every arrival: one pass over the answers, and grantVotes' grouping by slots only when a
  // reply names slots (a semaphore's); without slots every granting reply is in one group.
  let granted = 0
  let refused = 0
  let slots = false
  for (const a of t.answers) {
    if (!a.ok || !a.node.mayVote) continue
    const code = a.value[0] ?? 0
    if (code < 0) refused++
    else if (code > 0) {
      granted++
      if (a.value.length > ACQUIRE_FIELDS) slots = true
    }
  }
  return (slots ? grantVotes(t).length : granted) >= t.majority || refused >= t.majority
}

/** The answers a renew or release settles on when a majority gives them (made once: asked on every arrival). */
const NOT_HELD = [Refused.NOT_FOUND, Refused.NOT_OWNER].map(is)
const SAME_ANSWER = [is(1), is(2), ...NOT_HELD]

/** For renew: settle as soon as a majority renewed (in the same slots), or a majority agrees on a refusal. */
export function settledForRenew(t: Tally<Reply>): boolean {
  return renewVotes(t).length >= t.majority || NOT_HELD.some((test) => countWhere(t, test) >= t.majority)
}

/** For renew and release: settle as soon as a majority agrees on one answer, or on yes. */
export function settledByMajority(t: Tally<Reply>): boolean {
  for (const test of SAME_ANSWER) {
    if (countWhere(t, test) >= t.majority) return true
  }
  return countWhere(t, did) >= t.majority
}

/**
 * Why an acquire was not granted: a refused mode, limit or number of permits, a conflicting hold (or
 * split vote), or no majority. `held`: the tally's counted HELD replies (heldReplies), which the
 * caller also needs for a refusal that may wait.
 */
export function refusal(
  quorum: Quorum,
  tally: Tally<Reply>,
  held: readonly Reply[],
  key: string,
  kind: Kind,
  limits: { maxWaiters: number; maxReaders: number },
): ServiceError {
  // The common refusal (every 409 comes through here): a majority says held.
  if (held.length < tally.majority) {
    // The counted replies, read once.
    const counted = replies(tally)
    const count = (code: number) => counted.reduce((n, r) => (r[0] === code ? n + 1 : n), 0)
    const valuesOf = (code: number) => counted.flatMap((r) => (r[0] === code ? [r[1] ?? 0] : []))
    if (count(Refused.UPGRADE) >= tally.majority) return fail.upgradeNotSupported(key)
    const limitsSeen = valuesOf(Refused.LIMIT_MISMATCH)
    if (limitsSeen.length >= tally.majority) return fail.limitMismatch(key, consensus(limitsSeen))
    const permitsSeen = valuesOf(Refused.PERMITS_MISMATCH)
    if (permitsSeen.length >= tally.majority) return fail.permitsMismatch(key, consensus(permitsSeen))
    if (count(Refused.TOO_MANY_WAITERS) >= tally.majority) {
      return fail.tooManyWaiters(`${kind} "${key}" already has the most waiters allowed (${limits.maxWaiters}, MAX_WAITERS)`, { key })
    }
    if (count(Refused.TOO_MANY_READERS) >= tally.majority) return fail.tooManyReaders(key, limits.maxReaders)
    if (tally.size - counted.length > tally.size - tally.majority) return backendUnavailable(quorum, tally, 'no_majority')
  }
  // When a majority of the held copies will have lapsed: the earliest the lock can be free.
  const remaining = held.map((r) => r[1] ?? 0).sort((a, b) => a - b)
  const retryAfterMs = Math.max(1, remaining[Math.min(remaining.length, Math.floor(remaining.length / 2) + 1) - 1] ?? RETRY_AFTER_MS.held)
  return fail.held(key, retryAfterMs, kind)
}

/** Counted "held by another" answers: [code, remaining ms, ms until the line's head lapses, Redis µs]. */
export function heldReplies(tally: Tally<Reply>): Reply[] {
  return replies(tally).filter((r) => r[0] === Refused.HELD)
}

/** Why a renew or release found no majority of holds (`answers`: those it counts): someone else's, gone, or undecidable. */
export function notHeld(quorum: Quorum, tally: Tally<Reply>, answers: readonly Reply[], key: string, kind: Kind): ServiceError {
  const notOwner = answers.filter((r) => r[0] === Refused.NOT_OWNER).length
  const notFound = answers.filter((r) => r[0] === Refused.NOT_FOUND).length
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

/** The counted answers of any script (the vote rule), whatever their shape: owners.lua, the session scripts. */
export function countedValues<T>(tally: Tally<T>): T[] {
  const values: T[] = []
  for (const a of tally.answers) if (a.ok && a.node.mayVote) values.push(a.value)
  return values
}
