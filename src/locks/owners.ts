import type { Quorum } from '../redis/quorum.js'
import type { LockKeys } from './keys.js'
import { MAX_OWNERS_SHOWN, type HoldOwner } from './types.js'
import { ownersScript, type OwnersReply } from './scripts/owners.js'
import { countedValues, settledByEveryNode } from './votes.js'

/**
 * The owner labels of a lock's live holds that a majority of the voting nodes shows (a hold carries
 * the same fence on every node that has it; its owner is the label most of them show). Writer first,
 * then by fence; at most MAX_OWNERS_SHOWN.
 */
export function ownersOf(replies: readonly OwnersReply[], majority: number): HoldOwner[] {
  const byFence = new Map<number, { owners: Map<string, number>; seen: number; writer: boolean }>()
  for (const reply of replies) {
    for (const { fence, owner, writer } of reply) {
      const seen = byFence.get(fence) ?? { owners: new Map<string, number>(), seen: 0, writer }
      seen.seen++
      if (owner !== '') seen.owners.set(owner, (seen.owners.get(owner) ?? 0) + 1)
      byFence.set(fence, seen)
    }
  }
  const owners: HoldOwner[] = []
  for (const [fence, seen] of byFence) {
    if (seen.seen < majority || seen.owners.size === 0) continue
    const owner = [...seen.owners].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0]
    if (owner !== undefined) owners.push({ fence, owner, writer: seen.writer })
  }
  return owners.sort((a, b) => Number(b.writer) - Number(a.writer) || a.fence - b.fence).slice(0, MAX_OWNERS_SHOWN)
}

/**
 * Who holds the lock now, for inspect and the listings: the owner labels of its holds, by fence. Best
 * effort: a label, never worth failing the answer for, so any trouble (or no majority) gives []. (A
 * 409 gets them with the refusal itself: acquire.lua's HELD reply.)
 */
export async function holdOwners(quorum: Quorum, keys: LockKeys): Promise<HoldOwner[]> {
  try {
    const tally = await quorum.ask((node) => node.call(ownersScript, keys.all, { most: MAX_OWNERS_SHOWN }), settledByEveryNode)
    const counted = countedValues(tally)
    if (counted.length < tally.majority) return []
    return ownersOf(counted, tally.majority)
  } catch {
    return []
  }
}
