import { lockKeys, type Namespace } from './keys.js'
import type { LockContext } from './lock-context.js'
import { holdOwners } from './owners.js'
import { readerHolds } from './readers.js'
import { inspectScript } from './scripts/inspect.js'
import type { LockState } from './types.js'
import { backendUnavailable, consensus, countedValues, majorityFloor, settledByEveryNode } from './votes.js'

/** The state a majority agrees on. A hold counts while a majority of its copies is live. */
export async function inspectLock(ctx: LockContext, namespace: Namespace, key: string, withReaders: boolean): Promise<LockState> {
  const { quorum } = ctx
  const keys = lockKeys(ctx.config.keyPrefix, namespace, key)
  const input = { withHolds: withReaders }
  const [tally, owners] = await Promise.all([
    quorum.ask((node) => node.call(inspectScript, keys.all, input), settledByEveryNode),
    holdOwners(quorum, keys),
  ])
  const all = countedValues(tally)
  const majority = tally.majority
  if (all.length < majority) throw backendUnavailable(quorum, tally, 'no_majority')
  const writers = all.filter((r) => r.writerFence > 0)
  return {
    writer:
      writers.length >= majority
        ? {
            fence: consensus(writers.map((r) => r.writerFence)),
            remainingMs: majorityFloor(
              writers.map((r) => r.writerRemainingMs),
              majority,
            ),
            holdCount: consensus(writers.map((r) => r.writerHoldCount)),
          }
        : null,
    readers: majorityFloor(
      all.map((r) => r.readers),
      majority,
    ),
    waiters: Math.max(0, ...all.map((r) => r.waiters)),
    writerWaiting: all.some((r) => r.writersWaiting > 0),
    limit: consensus(all.flatMap((r) => (r.limit > 0 ? [r.limit] : []))),
    permitsInUse: majorityFloor(
      all.map((r) => r.permitsInUse),
      majority,
    ),
    delayedMs: majorityFloor(
      all.map((r) => r.delayedMs),
      majority,
    ),
    ...(withReaders ? { readerHolds: readerHolds(all, majority) } : {}),
    owners,
  }
}
