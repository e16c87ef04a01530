import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { boundHoldsFrom, type BoundHold } from './bound-entry.js'
import { intAt, replyArray, textAt } from './reply.js'

/** session_show.lua: what GET /sessions/:id shows (and a session's watch looks at); changes nothing. */
export interface SessionShowInput {
  /** The API key asking ('' while the service runs open). */
  by: string
}

export type SessionShowReply =
  | { code: typeof ReplyCode.LIVE; ttlMs: number; remainingMs: number; owner: string; holds: BoundHold[] }
  /** closedAt: when DELETE closed it, lately (Redis ms); else 0. */
  | { code: typeof ReplyCode.SESSION_NOT_FOUND; closedAt: number }

export const sessionShowScript: Script<SessionShowInput, SessionShowReply> = {
  name: 'session_show',
  args: (s) => [s.by],
  decode(reply) {
    const r = replyArray('session_show', reply)
    switch (r[0]) {
      case ReplyCode.LIVE:
        return {
          code: ReplyCode.LIVE,
          ttlMs: intAt('session_show', r, 1),
          remainingMs: intAt('session_show', r, 2),
          owner: textAt('session_show', r, 3),
          holds: boundHoldsFrom(r, 4),
        }
      case ReplyCode.SESSION_NOT_FOUND:
        return { code: ReplyCode.SESSION_NOT_FOUND, closedAt: intAt('session_show', r, 1) }
    }
    throw new ScriptReplyError('session_show', reply)
  },
}
