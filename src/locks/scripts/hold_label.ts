import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { replyArray } from './reply.js'

/** hold_label.lua: label a hold handed to a waiter with its owner and session ('' for none). */
export interface HoldLabelInput {
  hold: HoldKind
  token: string
  owner: string
  sessionRef: string
}

export type HoldLabelReply = { code: typeof ReplyCode.LABELLED } | { code: typeof ReplyCode.NOT_FOUND }

export const holdLabelScript: Script<HoldLabelInput, HoldLabelReply> = {
  name: 'hold_label',
  args: (l) => [l.hold, l.token, l.owner, l.sessionRef],
  decode(reply) {
    switch (replyArray('hold_label', reply)[0]) {
      case ReplyCode.LABELLED:
        return { code: ReplyCode.LABELLED }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
    }
    throw new ScriptReplyError('hold_label', reply)
  },
}
