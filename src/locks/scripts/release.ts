import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray, textAt } from './reply.js'

/** release.lua: drop one hold of the owning token (a reentrant hold: one of its count). */
export interface ReleaseInput {
  hold: HoldKind
  token: string
  /** For the hand-off to the next waiter: one value for every node, so that they agree (fence-hint.ts). */
  fenceHint: number
  /** The calling replica (WaitRoom.replicaId): pushes to its waiters come back in the reply instead. */
  replicaId: string
}

export type ReleaseReply =
  /** `pushes`: to the calling replica's waiters, as they would have been published (include/queue.lua). */
  | { code: typeof ReplyCode.RELEASED; pushes: readonly string[] }
  | { code: typeof ReplyCode.DECREMENTED; holdCount: number }
  | { code: typeof ReplyCode.NOT_FOUND }
  | { code: typeof ReplyCode.NOT_OWNER }

const NO_PUSHES: readonly string[] = []

export const releaseScript: Script<ReleaseInput, ReleaseReply> = {
  name: 'release',
  args: (r) => [r.hold, r.token, r.fenceHint, r.replicaId],
  decode(reply) {
    const r = replyArray('release', reply)
    switch (r[0]) {
      case ReplyCode.RELEASED: {
        if (r.length <= 2) return { code: ReplyCode.RELEASED, pushes: NO_PUSHES }
        const pushes: string[] = []
        for (let i = 2; i < r.length; i++) pushes.push(textAt('release', r, i))
        return { code: ReplyCode.RELEASED, pushes }
      }
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
