import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray } from './reply.js'

/** session_open.lua: open a session (POST /sessions). */
export interface SessionOpenInput {
  /** The API key opening it ('' while the service runs open). */
  by: string
  ttlMs: number
  owner: string | undefined
  /** The lock-delay of its holds that give none (0: none). */
  lockDelayMs: number
}

export type SessionOpenReply = { code: typeof ReplyCode.OPENED; ttlMs: number } | { code: typeof ReplyCode.SESSION_EXISTS }

export const sessionOpenScript: Script<SessionOpenInput, SessionOpenReply> = {
  name: 'session_open',
  args: (s) => (s.lockDelayMs > 0 ? [s.by, s.ttlMs, s.owner ?? '', s.lockDelayMs] : [s.by, s.ttlMs, s.owner ?? '']),
  decode(reply) {
    const r = replyArray('session_open', reply)
    switch (r[0]) {
      case ReplyCode.OPENED:
        return { code: ReplyCode.OPENED, ttlMs: intAt('session_open', r, 1) }
      case ReplyCode.SESSION_EXISTS:
        return { code: ReplyCode.SESSION_EXISTS }
    }
    throw new ScriptReplyError('session_open', reply)
  },
}
