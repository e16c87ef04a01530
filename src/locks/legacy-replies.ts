import type { Tally } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'

/**
 * Reading the replies of scripts that have no decoder yet (the session and watch scripts, read in
 * sessions.ts and watch.ts) by position. Once every script has its definition in src/locks/scripts/,
 * this file and its re-export in votes.ts go.
 */

/** An undecoded reply: an array of integers whose first slot is a code. */
export type Reply = readonly number[]

/** Counted replies (the vote rule, as votes.ts countedValues). */
export function replies(tally: Tally<Reply>): Reply[] {
  const values: Reply[] = []
  for (const a of tally.answers) if (a.ok && a.node.mayVote) values.push(a.value)
  return values
}

/** Every reply, voting or not. */
export function anyReplies(tally: Tally<Reply>): Reply[] {
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

/** A renewal's fixed fields; a semaphore's hold names its slots after them. */
const RENEW_FIELDS = 6

/** The counted renewing replies that name the same slots (all of them when none names any). */
export function renewVotes(tally: Tally<Reply>): Reply[] {
  const renewed = replies(tally).filter((r) => r[0] === ReplyCode.RENEWED)
  if (!renewed.some((r) => r.length > RENEW_FIELDS)) return renewed
  const groups = new Map<string, Reply[]>()
  let best: Reply[] = []
  for (const r of renewed) {
    const slots = r.slice(RENEW_FIELDS).join(',')
    const group = groups.get(slots) ?? []
    group.push(r)
    groups.set(slots, group)
    if (group.length > best.length) best = group
  }
  return best
}

/** Settle as soon as a majority renewed (in the same slots), or a majority agrees on a refusal. */
export function settledForRenew(t: Tally<Reply>): boolean {
  if (renewVotes(t).length >= t.majority) return true
  return countWhere(t, (c) => c === ReplyCode.NOT_FOUND) >= t.majority || countWhere(t, (c) => c === ReplyCode.NOT_OWNER) >= t.majority
}
