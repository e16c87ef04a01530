import type { Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { integerReply } from './reply.js'

/** rollback.lua: undo what one acquire attempt did, when it did not become a grant. */
export interface RollbackInput {
  hold: HoldKind
  token: string
  attempt: string
  /** For a hand-off to the next waiter. */
  fenceHint: number
}

/** `undone`: this attempt's change was undone (false: nothing of it was left). */
export interface RollbackReply {
  undone: boolean
}

export const rollbackScript: Script<RollbackInput, RollbackReply> = {
  name: 'rollback',
  args: (r) => [r.hold, r.token, r.attempt, r.fenceHint],
  decode: (reply) => ({ undone: integerReply('rollback', reply) === 1 }),
}
