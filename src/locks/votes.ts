import { ServiceError } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'

/** Script replies are arrays of integers whose first slot is a code from ScriptCode. */
export type Reply = readonly number[]

export function replies(tally: Tally<Reply>): Reply[] {
  return tally.answers.flatMap((a) => (a.ok ? [a.value] : []))
}

export function countWhere(tally: Tally<Reply>, test: (code: number) => boolean): number {
  let n = 0
  for (const a of tally.answers) if (a.ok && test(a.value[0] ?? 0)) n++
  return n
}

/** Nodes that failed or never answered before the vote settled. */
export function failures(tally: Tally<unknown>): number {
  return tally.size - tally.answers.filter((a) => a.ok).length
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
  const message =
    reason === 'validity_expired'
      ? 'the Redis nodes answered too slowly for the lock to be valid; nothing was granted'
      : reason === 'fence_not_stored'
        ? 'the fencing token could not be stored on a majority of Redis nodes; nothing was granted'
        : `the lock backend could not decide: ${answered} of ${quorum.size} Redis nodes answered, ${quorum.majority} needed`
  return new ServiceError(
    'backend_unavailable',
    message,
    { reason, nodes: quorum.describe(tally), answered, needed: quorum.majority },
    1000,
  )
}
