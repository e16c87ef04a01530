import { fail } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import type { HoldRenewBoundReply } from './scripts/hold_renew_bound.js'
import { agreeingOnSlots } from './slots.js'
import { backendUnavailable, countCode, countedValues, type Coded } from './votes.js'

/**
 * Reading the nodes' decoded answers to the session scripts (src/locks/scripts/), through the vote
 * rule (countedValues): a session script's outcome, and a bound hold's renewal.
 */

/** What a session script answers when it did what was asked (its positive codes are 1 and 2). */
export type Done<R> = Extract<R, { code: 1 | 2 }>

const did = <R extends Coded>(r: R): r is Done<R> => r.code > 0

/** Counted replies with this code, narrowed to it. */
export function withCode<R extends Coded, C extends R['code']>(tally: Tally<R>, code: C): Extract<R, { code: C }>[] {
  return countedValues(tally).filter((r): r is Extract<R, { code: C }> => r.code === code)
}

/** A session's script decided: a majority did it, or a majority knows no such session. */
export function settledForSession(t: Tally<Coded>): boolean {
  let done = 0
  let notFound = 0
  for (const r of countedValues(t)) {
    if (r.code > 0) done++
    else if (r.code === ReplyCode.SESSION_NOT_FOUND) notFound++
  }
  return done >= t.majority || notFound >= t.majority
}

/** A session script's answer: the counted replies that did it, or the error when no majority did. */
export function decided<R extends Coded>(quorum: Quorum, tally: Tally<R>): Done<R>[] {
  const done = countedValues(tally).filter(did)
  if (done.length >= tally.majority) return done
  if (countCode(tally, ReplyCode.SESSION_NOT_FOUND) >= tally.majority) throw fail.sessionNotFound()
  throw backendUnavailable(quorum, tally, 'no_majority')
}

type RenewedBound = Extract<HoldRenewBoundReply, { code: typeof ReplyCode.RENEWED }>

/**
 * The counted renewals of a bound hold that count together: a semaphore's hold counts only where a
 * majority holds it in the same slots (the largest group naming the same ones); other holds name none.
 */
export function boundRenewVotes(tally: Tally<HoldRenewBoundReply>): RenewedBound[] {
  return agreeingOnSlots(countedValues(tally).filter((r): r is RenewedBound => r.code === ReplyCode.RENEWED))
}

/** For a bound hold's renewal: settle once a majority renewed it (in the same slots), or a majority has it no more. */
export function settledForBoundRenew(t: Tally<HoldRenewBoundReply>): boolean {
  let renewed = 0
  let notFound = 0
  let slots = false
  for (const r of countedValues(t)) {
    if (r.code === ReplyCode.NOT_FOUND) notFound++
    else {
      renewed++
      if (r.slots !== '') slots = true
    }
  }
  return (slots ? boundRenewVotes(t).length : renewed) >= t.majority || notFound >= t.majority
}
