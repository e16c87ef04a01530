import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray, slotsFrom, textAt } from './reply.js'

/** acquire.lua: one attempt to take (or re-take) a hold; a waiter's attempt also keeps its place in line. */
export interface AcquireInput {
  hold: HoldKind
  token: string
  ttlMs: number
  reentrant: boolean
  /** The attempt id (unique among the attempts on one lock): what rollback.lua undoes. */
  attempt: string
  /** '' for a request that does not wait. */
  waiterId: string
  /** The waiter's place in line; '' to take the next one. */
  place: string
  fenceHint: number
  /** The request gave no TTL: a re-grant keeps the hold's latest TTL. */
  keepTtl: boolean
  /** A semaphore's permits and limit (undefined for any other hold). */
  permits: number | undefined
  limit: number | undefined
  /** Quorum mode, a semaphore's second round: the slots most nodes named ("0,3"); '' in a first round. */
  proposal: string
  owner: string
  sessionRef: string
  /** The hold's lock-delay, ms (0: none; include/delay.lua). */
  lockDelayMs: number
}

/** A hold granted or re-granted; `slots`: a semaphore's ("0,3"), '' for any other hold. */
export interface Granted {
  code: typeof ReplyCode.GRANTED | typeof ReplyCode.REGRANTED
  fence: number
  holdCount: number
  ttlMs: number
  slots: string
}

/**
 * A conflicting hold, or others ahead in line. `wakeInMs`: when a waiter at the front should try again
 * (0: wait for a push); `redisUs`: the node's clock, to date a later hand-off (a waiter's; 0 otherwise); `owners`: the owner
 * labels of the holds in the way. `delayed`: the script said DELAYED — nothing holds what was asked
 * for, but a lock-delay runs for retryAfterMs more; it waits and counts as a HELD refusal does.
 */
export interface Held {
  code: typeof ReplyCode.HELD
  retryAfterMs: number
  wakeInMs: number
  redisUs: number
  owners: readonly string[]
  delayed: boolean
}

export type AcquireReply =
  | Granted
  | Held
  | { code: typeof ReplyCode.UPGRADE }
  | { code: typeof ReplyCode.TOO_MANY_READERS }
  | { code: typeof ReplyCode.TOO_MANY_WAITERS }
  | { code: typeof ReplyCode.LIMIT_MISMATCH; limit: number }
  | { code: typeof ReplyCode.PERMITS_MISMATCH; permits: number }

export function isGranted(reply: AcquireReply): reply is Granted {
  return reply.code > 0
}

export function isHeld(reply: AcquireReply): reply is Held {
  return reply.code === ReplyCode.HELD
}

const NO_OWNERS: readonly string[] = Object.freeze([])

export const acquireScript: Script<AcquireInput, AcquireReply> = {
  name: 'acquire',
  args(a) {
    // In acquire.lua's order: what a plain request needs first, so that it sends five (blanks at the end are left out).
    const args: (string | number)[] = [
      a.hold,
      a.token,
      a.ttlMs,
      a.attempt,
      a.fenceHint,
      a.reentrant ? 1 : '',
      a.waiterId,
      a.place,
      a.keepTtl ? 1 : '',
    ]
    if (a.permits !== undefined || a.proposal !== '' || a.owner !== '' || a.sessionRef !== '' || a.lockDelayMs !== 0) {
      args.push(a.permits ?? '', a.limit ?? '', a.proposal, a.owner, a.sessionRef, a.lockDelayMs > 0 ? a.lockDelayMs : '')
    }
    return withoutTrailingBlanks(args)
  },
  decode(reply) {
    const r = replyArray('acquire', reply)
    switch (r[0]) {
      case ReplyCode.GRANTED:
      case ReplyCode.REGRANTED:
        return {
          code: r[0],
          fence: intAt('acquire', r, 1),
          holdCount: intAt('acquire', r, 2),
          ttlMs: intAt('acquire', r, 3),
          slots: slotsFrom('acquire', r, 4),
        }
      case ReplyCode.HELD:
      case ReplyCode.DELAYED:
        return {
          code: ReplyCode.HELD,
          retryAfterMs: intAt('acquire', r, 1),
          wakeInMs: intAt('acquire', r, 2),
          redisUs: intAt('acquire', r, 3),
          owners: r.length > HELD_FIELDS ? ownersFrom(r) : NO_OWNERS,
          delayed: r[0] === ReplyCode.DELAYED,
        }
      case ReplyCode.UPGRADE:
        return { code: ReplyCode.UPGRADE }
      case ReplyCode.TOO_MANY_READERS:
        return { code: ReplyCode.TOO_MANY_READERS }
      case ReplyCode.TOO_MANY_WAITERS:
        return { code: ReplyCode.TOO_MANY_WAITERS }
      case ReplyCode.LIMIT_MISMATCH:
        return { code: ReplyCode.LIMIT_MISMATCH, limit: intAt('acquire', r, 1) }
      case ReplyCode.PERMITS_MISMATCH:
        return { code: ReplyCode.PERMITS_MISMATCH, permits: intAt('acquire', r, 1) }
    }
    throw new ScriptReplyError('acquire', reply)
  },
  confirms: (reply) => reply.code > 0,
}

/** A HELD reply's fixed fields; the owner labels follow them. */
const HELD_FIELDS = 4

function ownersFrom(r: readonly unknown[]): string[] {
  const owners: string[] = []
  for (let i = HELD_FIELDS; i < r.length; i++) owners.push(textAt('acquire', r, i))
  return owners
}

/**
 * Drops the empty arguments at the end, in place (acquire.lua reads a missing argument as ''): most
 * acquires name no semaphore, owner, session or waiter, and every argument is work for ioredis and Redis.
 */
function withoutTrailingBlanks(args: (string | number)[]): (string | number)[] {
  let end = args.length
  while (end > 0 && args[end - 1] === '') end--
  args.length = end
  return args
}
