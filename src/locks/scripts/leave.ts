import type { Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { integerReply } from './reply.js'

/** leave.lua: a waiter leaves the line; one that gives up also hands back a hold handed to it. */
export interface LeaveInput {
  waiterId: string
  /** A waiter that was not granted: its hold and token, to hand back a hold handed to it ('' for one that was). */
  hold: HoldKind | ''
  token: string
  /** For a hand-off to the next waiter. */
  fenceHint: number
}

/** `left`: the waiter was in line, or a hold handed to it was dropped. */
export interface LeaveReply {
  left: boolean
}

export const leaveScript: Script<LeaveInput, LeaveReply> = {
  name: 'leave',
  args: (l) => [l.waiterId, l.hold, l.token, l.fenceHint],
  decode: (reply) => ({ left: integerReply('leave', reply) === 1 }),
}
