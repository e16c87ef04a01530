import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray } from './reply.js'

/**
 * key_sessions.lua: the live sessions of one API key (MAX_SESSIONS_PER_KEY): a session (its reference)
 * opened (refused when the key has `maxSessions` live), kept alive for `ttlMs`, or closed.
 */
export type KeySessionsInput =
  | { op: 'open'; ref: string; ttlMs: number; maxSessions: number }
  | { op: 'keep'; ref: string; ttlMs: number }
  | { op: 'close'; ref: string }

export type KeySessionsReply = { code: typeof ReplyCode.NOTED } | { code: typeof ReplyCode.TOO_MANY_SESSIONS; live: number }

export const keySessionsScript: Script<KeySessionsInput, KeySessionsReply> = {
  name: 'key_sessions',
  args: (s) => (s.op === 'open' ? [s.op, s.ref, s.ttlMs, s.maxSessions] : s.op === 'keep' ? [s.op, s.ref, s.ttlMs] : [s.op, s.ref]),
  decode(reply) {
    const r = replyArray('key_sessions', reply)
    switch (r[0]) {
      case ReplyCode.NOTED:
        return { code: ReplyCode.NOTED }
      case ReplyCode.TOO_MANY_SESSIONS:
        return { code: ReplyCode.TOO_MANY_SESSIONS, live: intAt('key_sessions', r, 1) }
    }
    throw new ScriptReplyError('key_sessions', reply)
  },
}
