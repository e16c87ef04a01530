import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray } from './reply.js'

/** hold_state.lua: whether a token still has its hold (bound to the session `ref`, or to any with ''); changes nothing. */
export interface HoldStateInput {
  hold: HoldKind
  token: string
  ref: string
}

export type HoldStateReply = { code: typeof ReplyCode.HOLDING; fence: number; remainingMs: number } | { code: typeof ReplyCode.NOT_FOUND }

export const holdStateScript: Script<HoldStateInput, HoldStateReply> = {
  name: 'hold_state',
  args: (h) => [h.hold, h.token, h.ref],
  decode(reply) {
    const r = replyArray('hold_state', reply)
    switch (r[0]) {
      case ReplyCode.HOLDING:
        return { code: ReplyCode.HOLDING, fence: intAt('hold_state', r, 1), remainingMs: intAt('hold_state', r, 2) }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
    }
    throw new ScriptReplyError('hold_state', reply)
  },
}
