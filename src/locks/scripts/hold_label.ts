import { ReplyCode, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { codeOnly } from './reply.js'

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
  decode: (reply) => codeOnly('hold_label', reply, [ReplyCode.LABELLED, ReplyCode.NOT_FOUND]),
}
