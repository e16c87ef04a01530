import { consensus, majorityFloor, type Reply } from './votes.js'

/**
 * One read hold, or one hold of a semaphore, as operators see it (never its token): enough to
 * force-release it by fence. `permits` is 0 for a read hold.
 */
export interface ReaderHold {
  fence: number
  remainingMs: number
  holdCount: number
  permits: number
}

/** inspect.lua's fixed fields; the holds (fence, remainingMs, holdCount, permits) follow them. */
const FIXED_FIELDS = 8
const HOLD_FIELDS = 4

/**
 * The read (or semaphore) holds a majority of the voting replies show (in quorum mode, a hold carries
 * the same fence on every node that has it): remaining time as the majority sees it (the majority-th
 * longest), sorted by fence.
 */
export function readerHolds(replies: readonly Reply[], majority: number): ReaderHold[] {
  const byFence = new Map<number, { remaining: number[]; counts: number[]; permits: number[] }>()
  for (const reply of replies) {
    for (let i = FIXED_FIELDS; i + HOLD_FIELDS - 1 < reply.length; i += HOLD_FIELDS) {
      const fence = reply[i] ?? 0
      const seen = byFence.get(fence) ?? { remaining: [], counts: [], permits: [] }
      seen.remaining.push(reply[i + 1] ?? 0)
      seen.counts.push(reply[i + 2] ?? 1)
      seen.permits.push(reply[i + 3] ?? 0)
      byFence.set(fence, seen)
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
