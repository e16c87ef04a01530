import { ScriptReplyError, type Script } from '../../redis/scripts.js'
import { intAt, replyArray } from './reply.js'

/** fence_check.lua: whether a fence is a live hold's on one node; changes nothing. */
export interface FenceCheckInput {
  fence: number
}

/** One node's view of the live holds, as far as a fence check needs it. */
export interface FenceCheckReply {
  /** The live write hold's fence; 0: no live writer. */
  writerFence: number
  /** A live read or semaphore hold carries the fence asked about. */
  readerHasFence: boolean
  /** Live read or semaphore holds. */
  liveReaders: number
  /** The highest fence among them; 0: none. */
  highestReaderFence: number
}

export const fenceCheckScript: Script<FenceCheckInput, FenceCheckReply> = {
  name: 'fence_check',
  args: (i) => [String(i.fence)],
  decode(reply) {
    const r = replyArray('fence_check', reply)
    const has = intAt('fence_check', r, 1)
    if (has !== 0 && has !== 1) throw new ScriptReplyError('fence_check', reply)
    return {
      writerFence: intAt('fence_check', r, 0),
      readerHasFence: has === 1,
      liveReaders: intAt('fence_check', r, 2),
      highestReaderFence: intAt('fence_check', r, 3),
    }
  },
}
