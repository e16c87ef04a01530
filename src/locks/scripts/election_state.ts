import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray, textAt } from './reply.js'

/** election_state.lua: an election's leader (never its token), or none. */
export interface ElectionStateInput {
  /** An observer's look: flag the leader's hold as watched, so that its end is pushed. */
  watch: boolean
}

export type ElectionStateReply =
  | {
      code: typeof ReplyCode.LEADING
      term: number
      remainingMs: number
      revision: number
      sinceMs: number
      candidates: number
      transitions: number
      /** The id include/lost.lua pushes when this hold goes (a hash: no token). */
      holdId: string
      bound: boolean
      candidate: string
      value: string
    }
  | {
      code: typeof ReplyCode.VACANT
      /** The fence counter: the latest term begun here (0: none remembered). */
      lastTerm: number
      candidates: number
      transitions: number
      /** A granted hold whose term has no record yet lapses in this many ms, and its fence (0 and 0: none). */
      pendingMs: number
      pendingTerm: number
    }

export const electionStateScript: Script<ElectionStateInput, ElectionStateReply> = {
  name: 'election_state',
  args: (s) => (s.watch ? ['1'] : []),
  decode(reply) {
    const s = 'election_state'
    const r = replyArray(s, reply)
    switch (r[0]) {
      case ReplyCode.LEADING:
        return {
          code: ReplyCode.LEADING,
          term: intAt(s, r, 1),
          remainingMs: intAt(s, r, 2),
          revision: intAt(s, r, 3),
          sinceMs: intAt(s, r, 4),
          candidates: intAt(s, r, 5),
          transitions: intAt(s, r, 6),
          holdId: textAt(s, r, 7),
          bound: intAt(s, r, 8) === 1,
          candidate: textAt(s, r, 9),
          value: textAt(s, r, 10),
        }
      case ReplyCode.VACANT:
        return {
          code: ReplyCode.VACANT,
          lastTerm: intAt(s, r, 1),
          candidates: intAt(s, r, 2),
          transitions: intAt(s, r, 3),
          pendingMs: intAt(s, r, 4),
          pendingTerm: intAt(s, r, 5, 0),
        }
    }
    throw new ScriptReplyError(s, reply)
  },
}
