import type { InspectReply } from './scripts/inspect.js'
import type { ReaderHold } from './types.js'
import { consensus, majorityFloor } from './votes.js'

/**
 * The read (or semaphore) holds a majority of the voting replies show (in quorum mode, a hold carries
 * the same fence on every node that has it): remaining time as the majority sees it (the majority-th
 * longest), sorted by fence.
 */
export function readerHolds(replies: readonly InspectReply[], majority: number): ReaderHold[] {
  const byFence = new Map<number, { remaining: number[]; counts: number[]; permits: number[] }>()
  for (const reply of replies) {
    for (const hold of reply.holds) {
      const seen = byFence.get(hold.fence) ?? { remaining: [], counts: [], permits: [] }
      seen.remaining.push(hold.remainingMs)
      seen.counts.push(hold.holdCount)
      seen.permits.push(hold.permits)
      byFence.set(hold.fence, seen)
    }
  }
  return [...byFence]
    .filter(([, seen]) => seen.remaining.length >= majority)
    .map(([fence, seen]) => ({
      fence,
      remainingMs: majorityFloor(seen.remaining, majority),
      holdCount: consensus(seen.counts),
      permits: consensus(seen.permits),
    }))
    .sort((a, b) => a.fence - b.fence)
}
