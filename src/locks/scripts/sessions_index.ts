import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray } from './reply.js'

/**
 * sessions_index.lua: every live session of the service, for its metrics: a session (its reference)
 * opened or kept alive for `ttlMs`, or closed; or the census of those live and lapsed.
 */
export type SessionsIndexInput = { op: 'open' | 'keep'; ref: string; ttlMs: number } | { op: 'close'; ref: string } | { op: 'census' }

export type SessionsIndexReply =
  | { code: typeof ReplyCode.NOTED }
  /** The sessions live now, and those that lapsed since this node's last census. */
  | { code: typeof ReplyCode.COUNTED; live: number; expired: number }

export const sessionsIndexScript: Script<SessionsIndexInput, SessionsIndexReply> = {
  name: 'sessions_index',
  args: (s) => (s.op === 'census' ? [s.op] : s.op === 'close' ? [s.op, s.ref] : [s.op, s.ref, s.ttlMs]),
  decode(reply) {
    const r = replyArray('sessions_index', reply)
    switch (r[0]) {
      case ReplyCode.NOTED:
        return { code: ReplyCode.NOTED }
      case ReplyCode.COUNTED:
        return { code: ReplyCode.COUNTED, live: intAt('sessions_index', r, 1), expired: intAt('sessions_index', r, 2) }
    }
    throw new ScriptReplyError('sessions_index', reply)
  },
}
