import { ServiceError } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'

/** Script replies are arrays of integers whose first slot is a code from ScriptCode. */
export type Reply = readonly number[]

/**
 * The replies that count toward a majority: from nodes the vote rule lets vote now (RedisNode.vote:
 * up, identified, not quarantined after a restart, clock trusted). Every path that decides by
 * majority — attempt, hand-off, renew, fence commit, inspect — counts through here. Only release and
 * force-release read every answer (see `anyReplies`): removing a hold is safe whoever says so.
 */
export function replies(tally: Tally<Reply>): Reply[] {
  return tally.answers.flatMap((a) => (a.ok && a.node.mayVote ? [a.value] : []))
}

/** Every reply, voting or not: for release, where the answer only reports what was removed. */
export function anyReplies(tally: Tally<Reply>): Reply[] {
  return tally.answers.flatMap((a) => (a.ok ? [a.value] : []))
}

/** Counted replies whose code passes `test`. */
export function countWhere(tally: Tally<Reply>, test: (code: number) => boolean): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && a.node.mayVote && test(a.value[0] ?? 0)) n++
  return n
}

/** Counted answers of any kind (a fence commit's OK included). */
export function countedAnswers(tally: Tally<unknown>): number {
  return tally.answers.filter((a) => a.ok && a.node.mayVote).length
}

/** Nodes whose answer does not count: failed, never answered before the vote settled, or may not vote. */
export function failures(tally: Tally<unknown>): number {
  return tally.size - countedAnswers(tally)
}

/** The value most replies agree on (ties: the largest). */
export function consensus(values: readonly number[]): number {
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

export type FailureReason = 'no_majority' | 'validity_expired' | 'fence_not_stored'

export function backendUnavailable(quorum: Quorum, tally: Tally<unknown> | undefined, reason: FailureReason): ServiceError {
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
  return new ServiceError(
    'backend_unavailable',
    message,
    { reason, nodes: quorum.describe(tally), answered, voting, needed: quorum.majority },
    1000,
  )
}
