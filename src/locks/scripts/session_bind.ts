import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray, textAt } from './reply.js'

/**
 * session_bind.lua: note a hold (its entry: bound-entry.ts) as bound to the session before the acquire
 * that makes it (`maxHolds`: MAX_SESSION_HOLDS), or, once the acquire made it, mark it as held.
 */
export type SessionBindInput = { by: string; entry: string; maxHolds: number } | { by: string; entry: string; held: true }

export type SessionBindReply =
  /**
   * owner: the session's owner label ('' for none; '' too when marking a hold as held); lockDelayMs:
   * its holds' lock-delay (0 for none, and when marking a hold as held).
   */
  | {
      code: typeof ReplyCode.BOUND | typeof ReplyCode.ALREADY_BOUND
      ttlMs: number
      remainingMs: number
      owner: string
      lockDelayMs: number
    }
  | { code: typeof ReplyCode.SESSION_NOT_FOUND }
  | { code: typeof ReplyCode.TOO_MANY_HOLDS; holds: number; ttlMs: number }

export const sessionBindScript: Script<SessionBindInput, SessionBindReply> = {
  name: 'session_bind',
  args: (s) => ('held' in s ? [s.by, s.entry, 0, 'held'] : [s.by, s.entry, s.maxHolds]),
  decode(reply) {
    const r = replyArray('session_bind', reply)
    const code = r[0]
    switch (code) {
      case ReplyCode.BOUND:
      case ReplyCode.ALREADY_BOUND:
        return {
          code,
          ttlMs: intAt('session_bind', r, 1),
          remainingMs: intAt('session_bind', r, 2),
          owner: textAt('session_bind', r, 3),
          lockDelayMs: intAt('session_bind', r, 4, 0),
        }
      case ReplyCode.SESSION_NOT_FOUND:
        return { code: ReplyCode.SESSION_NOT_FOUND }
      case ReplyCode.TOO_MANY_HOLDS:
        return { code: ReplyCode.TOO_MANY_HOLDS, holds: intAt('session_bind', r, 1), ttlMs: intAt('session_bind', r, 2) }
    }
    throw new ScriptReplyError('session_bind', reply)
  },
}
