import { ScriptReplyError, type Script } from '../../redis/scripts.js'

/** session_unbind.lua: forget holds of a session (their entries: bound-entry.ts). */
export interface SessionUnbindInput {
  entries: readonly string[]
}

/** How many of them were bound (the script answers a plain integer). */
export interface SessionUnbindReply {
  removed: number
}

export const sessionUnbindScript: Script<SessionUnbindInput, SessionUnbindReply> = {
  name: 'session_unbind',
  args: (s) => [...s.entries],
  decode(reply) {
    if (typeof reply !== 'number') throw new ScriptReplyError('session_unbind', reply)
    return { removed: reply }
  },
}
