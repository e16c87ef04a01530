import { ReplyCode, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { codeOnly } from './reply.js'

/** hold_drop_bound.lua: a session ends: drop one of its holds, if it is still bound to the session. */
export interface HoldDropBoundInput {
  hold: HoldKind
  token: string
  /** The session's reference (sessionRef). */
  ref: string
  /** For the hand-off to the next waiter: one value for every node, so that they agree (fence-hint.ts). */
  fenceHint: number
}

export type HoldDropBoundReply = { code: typeof ReplyCode.RELEASED } | { code: typeof ReplyCode.NOT_FOUND }

export const holdDropBoundScript: Script<HoldDropBoundInput, HoldDropBoundReply> = {
  name: 'hold_drop_bound',
  args: (h) => [h.hold, h.token, h.ref, h.fenceHint],
  decode: (reply) => codeOnly('hold_drop_bound', reply, [ReplyCode.RELEASED, ReplyCode.NOT_FOUND]),
}
