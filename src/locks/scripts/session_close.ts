import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { boundHoldsFrom, type BoundHold } from './bound-entry.js'
import { replyArray } from './reply.js'

/** session_close.lua: end a session (DELETE /sessions/:id); it names the holds that were bound to it. */
export interface SessionCloseInput {
  /** The API key asking ('' while the service runs open). */
  by: string
}

export type SessionCloseReply = { code: typeof ReplyCode.CLOSED; holds: BoundHold[] } | { code: typeof ReplyCode.SESSION_NOT_FOUND }

export const sessionCloseScript: Script<SessionCloseInput, SessionCloseReply> = {
  name: 'session_close',
  args: (s) => [s.by],
  decode(reply) {
    const r = replyArray('session_close', reply)
    switch (r[0]) {
      case ReplyCode.CLOSED:
        return { code: ReplyCode.CLOSED, holds: boundHoldsFrom(r, 1) }
      case ReplyCode.SESSION_NOT_FOUND:
        return { code: ReplyCode.SESSION_NOT_FOUND }
    }
    throw new ScriptReplyError('session_close', reply)
  },
}
