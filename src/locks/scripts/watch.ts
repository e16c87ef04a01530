import { isWordOf, lostReasons, type LostReason } from '../../contract/words.js'
import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray, textAt } from './reply.js'

/** watch.lua: whether a token still has its hold (flagged as watched, if so), or why it went. */
export interface WatchInput {
  hold: HoldKind
  token: string
}

/** Why a watched hold went, as include/lost.lua keeps it. */
export type GoneReason = Exclude<LostReason, 'expired'>

export type WatchReply =
  /** bound: the hold is bound to a session. */
  | { code: typeof ReplyCode.HOLDING; fence: number; remainingMs: number; bound: boolean }
  /**
   * reason and atMs (Redis ms): the record of why it went, when one is left (else undefined and 0);
   * othersHold: another live hold is on the lock (a renew would answer NOT_OWNER).
   */
  | { code: typeof ReplyCode.NOT_FOUND; reason: GoneReason | undefined; atMs: number; othersHold: boolean }

export const watchScript: Script<WatchInput, WatchReply> = {
  name: 'watch',
  args: (w) => [w.hold, w.token],
  decode(reply) {
    const r = replyArray('watch', reply)
    switch (r[0]) {
      case ReplyCode.HOLDING:
        return {
          code: ReplyCode.HOLDING,
          fence: intAt('watch', r, 1),
          remainingMs: intAt('watch', r, 2),
          bound: intAt('watch', r, 3) === 1,
        }
      case ReplyCode.NOT_FOUND:
        return {
          code: ReplyCode.NOT_FOUND,
          reason: goneReason(textAt('watch', r, 1)),
          atMs: intAt('watch', r, 2),
          othersHold: intAt('watch', r, 3, 0) === 1,
        }
    }
    throw new ScriptReplyError('watch', reply)
  },
}

function goneReason(text: string): GoneReason | undefined {
  if (!isWordOf(lostReasons, text) || text === 'expired') return undefined
  return text
}
