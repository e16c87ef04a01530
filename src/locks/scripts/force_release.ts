import type { Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { integerReply } from './reply.js'

/** force_release.lua: an operator drops the write hold, or the read or semaphore hold with `fence`. */
export interface ForceReleaseInput {
  hold: HoldKind
  /** Of the read or semaphore hold to drop (0, ignored, for the write hold). */
  fence: number
  /** For a hand-off to the next waiter. */
  fenceHint: number
}

/** `dropped`: there was such a hold, and it is gone. */
export interface ForceReleaseReply {
  dropped: boolean
}

export const forceReleaseScript: Script<ForceReleaseInput, ForceReleaseReply> = {
  name: 'force_release',
  args: (f) => [f.hold, f.fence, f.fenceHint],
  decode: (reply) => ({ dropped: integerReply('force_release', reply) === 1 }),
}
