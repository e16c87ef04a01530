import type { Script } from '../../redis/scripts.js'
import type { HoldOwner } from '../types.js'
import { intAt, replyArray, textAt } from './reply.js'

/** owners.lua: the owner labels of a lock's live holds on one node; changes nothing. */
export interface OwnersInput {
  /** The most read or semaphore holds to name. */
  most: number
}

/** The live writer (when there is one: `writer`), then each live read or semaphore hold that has an owner, by expiry. */
export type OwnersReply = readonly HoldOwner[]

export const ownersScript: Script<OwnersInput, OwnersReply> = {
  name: 'owners',
  args: (o) => [o.most],
  decode(reply) {
    const r = replyArray('owners', reply)
    const owners: HoldOwner[] = []
    // Pairs of fence and owner; the first pair is the writer's (fence 0: there is none).
    for (let i = 0; i + 1 < r.length; i += 2) {
      const fence = intAt('owners', r, i)
      if (fence !== 0) owners.push({ fence, owner: textAt('owners', r, i + 1), writer: i === 0 })
    }
    return owners
  },
}
