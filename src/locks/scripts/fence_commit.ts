import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray } from './reply.js'

/** fence_commit.lua: make a grant's fence (the largest its majority proposed) this grant's alone on a node. */
export interface FenceCommitInput {
  hold: HoldKind
  token: string
  fence: number
}

/** FENCE_TAKEN: the node's counter already reached the fence by another proposal; `counter` is where it is. */
export type FenceCommitReply = { code: typeof ReplyCode.COMMITTED } | { code: typeof ReplyCode.FENCE_TAKEN; counter: number }

export const fenceCommitScript: Script<FenceCommitInput, FenceCommitReply> = {
  name: 'fence_commit',
  args: (c) => [c.hold, c.token, c.fence],
  decode(reply) {
    const r = replyArray('fence_commit', reply)
    switch (r[0]) {
      case ReplyCode.COMMITTED:
        return { code: ReplyCode.COMMITTED }
      case ReplyCode.FENCE_TAKEN:
        return { code: ReplyCode.FENCE_TAKEN, counter: intAt('fence_commit', r, 1) }
    }
    throw new ScriptReplyError('fence_commit', reply)
  },
  confirms: (reply) => reply.code === ReplyCode.COMMITTED,
}
