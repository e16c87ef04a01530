import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import { parseBoundEntry, type BoundHold } from './bound-entry.js'
import { intAt, replyArray } from './reply.js'

/** session_keepalive.lua: renew a session for its TTL; it names the holds bound to it. */
export interface SessionKeepaliveInput {
  /** The API key asking ('' while the service runs open). */
  by: string
}

/** A hold of the session, and when it was bound (Redis ms; 0 once its acquire made it). */
export interface BoundSince {
  hold: BoundHold
  boundAt: number
}

export type SessionKeepaliveReply =
  { code: typeof ReplyCode.RENEWED; ttlMs: number; now: number; holds: BoundSince[] } | { code: typeof ReplyCode.SESSION_NOT_FOUND }

export const sessionKeepaliveScript: Script<SessionKeepaliveInput, SessionKeepaliveReply> = {
  name: 'session_keepalive',
  args: (s) => [s.by],
  decode(reply) {
    const r = replyArray('session_keepalive', reply)
    switch (r[0]) {
      case ReplyCode.RENEWED: {
        const holds: BoundSince[] = []
        for (let i = 3; i + 1 < r.length; i += 2) {
          const hold = parseBoundEntry(r[i])
          if (hold) holds.push({ hold, boundAt: intAt('session_keepalive', r, i + 1) })
        }
        return { code: ReplyCode.RENEWED, ttlMs: intAt('session_keepalive', r, 1), now: intAt('session_keepalive', r, 2), holds }
      }
      case ReplyCode.SESSION_NOT_FOUND:
        return { code: ReplyCode.SESSION_NOT_FOUND }
    }
    throw new ScriptReplyError('session_keepalive', reply)
  },
}
