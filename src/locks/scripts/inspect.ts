import type { Script } from '../../redis/scripts.js'
import type { ReaderHold } from '../types.js'
import { intAt, replyArray } from './reply.js'

/** inspect.lua: what one node shows of a lock; changes nothing. */
export interface InspectInput {
  /** Also each live read or semaphore hold (admin views). */
  withHolds: boolean
}

/** One node's view; the writer's fields are 0 when it has no live writer. */
export interface InspectReply {
  writerFence: number
  writerRemainingMs: number
  writerHoldCount: number
  /** Live read holds; of a semaphore: its live holds. */
  readers: number
  waiters: number
  writersWaiting: number
  /** A semaphore's limit and permits in use (0 for a lock). */
  limit: number
  permitsInUse: number
  /** ms until the last running lock-delay ends (0: none; include/delay.lua). */
  delayedMs: number
  /** With `withHolds`: each live read or semaphore hold, by expiry; else none. */
  holds: readonly ReaderHold[]
}

/** The fixed fields; with `withHolds`, each hold's fence, remainingMs, holdCount and permits follow them. */
const FIXED_FIELDS = 9
const HOLD_FIELDS = 4

const NO_HOLDS: readonly ReaderHold[] = Object.freeze([])

export const inspectScript: Script<InspectInput, InspectReply> = {
  name: 'inspect',
  args: (i) => (i.withHolds ? ['1'] : []),
  decode(reply) {
    const r = replyArray('inspect', reply)
    return {
      writerFence: intAt('inspect', r, 0),
      writerRemainingMs: intAt('inspect', r, 1, 0),
      writerHoldCount: intAt('inspect', r, 2, 1),
      readers: intAt('inspect', r, 3, 0),
      waiters: intAt('inspect', r, 4, 0),
      writersWaiting: intAt('inspect', r, 5, 0),
      limit: intAt('inspect', r, 6, 0),
      permitsInUse: intAt('inspect', r, 7, 0),
      delayedMs: intAt('inspect', r, 8, 0),
      holds: r.length > FIXED_FIELDS ? holdsFrom(r) : NO_HOLDS,
    }
  },
}

function holdsFrom(r: readonly unknown[]): ReaderHold[] {
  const holds: ReaderHold[] = []
  for (let i = FIXED_FIELDS; i + HOLD_FIELDS - 1 < r.length; i += HOLD_FIELDS) {
    holds.push({
      fence: intAt('inspect', r, i),
      remainingMs: intAt('inspect', r, i + 1),
      holdCount: intAt('inspect', r, i + 2),
      permits: intAt('inspect', r, i + 3),
    })
  }
  return holds
}
