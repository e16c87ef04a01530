import type { Script } from '../../redis/scripts.js'
import { integerReply } from './reply.js'

/** touch.lua: a live replica renews the leases of its waiters on one lock. */
export interface TouchInput {
  /** For a hand-off to a new head of the line. */
  fenceHint: number
  waiterIds: readonly string[]
}

/** How many of the given waiters were still in line. */
export interface TouchReply {
  inLine: number
}

export const touchScript: Script<TouchInput, TouchReply> = {
  name: 'touch',
  args: (t) => [t.fenceHint, ...t.waiterIds],
  decode: (reply) => ({ inLine: integerReply('touch', reply) }),
}
