import { consensus, type Reply } from './votes.js'

/** One read hold as operators see it (never its token): enough to force-release it by fence. */
export interface ReaderHold {
  fence: number
  remainingMs: number
  holdCount: number
}

/** inspect.lua's fixed fields; the read holds (fence, remainingMs, holdCount) follow them. */
const FIXED_FIELDS = 6

/**
 * The read holds a majority of the voting replies show (in quorum mode, a hold carries the same fence
 * on every node that has it): remaining time as the majority sees it (the majority-th longest), sorted
 * by fence.
 */
export function readerHolds(replies: readonly Reply[], majority: number): ReaderHold[] {
  const byFence = new Map<number, { remaining: number[]; counts: number[] }>()
  for (const reply of replies) {
    for (let i = FIXED_FIELDS; i + 2 < reply.length; i += 3) {
      const fence = reply[i] ?? 0
      const seen = byFence.get(fence) ?? { remaining: [], counts: [] }
      seen.remaining.push(reply[i + 1] ?? 0)
      seen.counts.push(reply[i + 2] ?? 1)
      byFence.set(fence, seen)
    }
  }
  return [...byFence]
    .filter(([, seen]) => seen.remaining.length >= majority)
    .map(([fence, seen]) => ({
      fence,
      remainingMs: seen.remaining.sort((a, b) => b - a)[majority - 1] ?? 0,
      holdCount: consensus(seen.counts),
    }))
    .sort((a, b) => a.fence - b.fence)
}
