import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray, textAt } from './reply.js'

/** election_stamp.lua: the record of a leader's term after its grant ('stamp'), or a new value ('proclaim'). */
export interface ElectionStampInput {
  op: 'stamp' | 'proclaim'
  token: string
  value: string
  /** When the term began (ms): the grant's time, the same on every node (stamp only). */
  sinceMs?: number
}

/** The leader's term as its record says: term (its hold's fence), revision, start (Redis ms), value. */
export interface TermRecord {
  term: number
  revision: number
  sinceMs: number
  remainingMs: number
  transitions: number
  value: string
}

export type ElectionStampReply =
  ({ code: typeof ReplyCode.STAMPED } & TermRecord) | { code: typeof ReplyCode.NOT_FOUND } | { code: typeof ReplyCode.NOT_OWNER }

export const electionStampScript: Script<ElectionStampInput, ElectionStampReply> = {
  name: 'election_stamp',
  args: (s) => (s.sinceMs === undefined ? [s.op, s.token, s.value] : [s.op, s.token, s.value, Math.round(s.sinceMs)]),
  decode(reply) {
    const r = replyArray('election_stamp', reply)
    switch (r[0]) {
      case ReplyCode.STAMPED:
        return {
          code: ReplyCode.STAMPED,
          term: intAt('election_stamp', r, 1),
          revision: intAt('election_stamp', r, 2),
          sinceMs: intAt('election_stamp', r, 3),
          remainingMs: intAt('election_stamp', r, 4),
          transitions: intAt('election_stamp', r, 5),
          value: textAt('election_stamp', r, 6),
        }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
      case ReplyCode.NOT_OWNER:
        return { code: ReplyCode.NOT_OWNER }
    }
    throw new ScriptReplyError('election_stamp', reply)
  },
  // What a client is told it leads with (and what observers are told) must survive a failover.
  confirms: (reply) => reply.code === ReplyCode.STAMPED,
}
