import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray } from './reply.js'

/** release.lua: drop one hold of the owning token (a reentrant hold: one of its count). */
export interface ReleaseInput {
  hold: HoldKind
  token: string
  /** For the hand-off to the next waiter: one value for every node, so that they agree (fence-hint.ts). */
  fenceHint: number
}

export type ReleaseReply =
  | { code: typeof ReplyCode.RELEASED }
  | { code: typeof ReplyCode.DECREMENTED; holdCount: number }
  | { code: typeof ReplyCode.NOT_FOUND }
  | { code: typeof ReplyCode.NOT_OWNER }

export const releaseScript: Script<ReleaseInput, ReleaseReply> = {
  name: 'release',
  args: (r) => [r.hold, r.token, r.fenceHint],
  decode(reply) {
    const r = replyArray('release', reply)
    switch (r[0]) {
      case ReplyCode.RELEASED:
        return { code: ReplyCode.RELEASED }
      case ReplyCode.DECREMENTED:
        return { code: ReplyCode.DECREMENTED, holdCount: intAt('release', r, 1) }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
      case ReplyCode.NOT_OWNER:
        return { code: ReplyCode.NOT_OWNER }
    }
    throw new ScriptReplyError('release', reply)
  },
}
