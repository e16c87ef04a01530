import { lockKeys, type Namespace } from './keys.js'
import type { LockContext } from './lock-context.js'
import { fenceCheckScript, type FenceCheckReply } from './scripts/fence_check.js'
import type { Tally } from '../redis/quorum.js'
import { backendUnavailable, consensus, countedValues, majorityFloor } from './votes.js'

/** A fence check's answer (Chubby's CheckSequencer): is `fence` a live hold's now? */
export interface FenceCheck {
  /** A live hold carries exactly this fence (a read or semaphore hold: any one of them). */
  current: boolean
  /**
   * This fence when it is current; else the live hold's fence (several read or semaphore holds: the
   * highest, the newest hold); null when nothing is held. So `current` is always `fence === asked`.
   */
  fence: number | null
  /** Anything is held there (by this fence or another). */
  held: boolean
}

/**
 * Settled once a majority of the counted answers agrees whether the fence is carried: not at the first
 * majority to answer, as inspect is, since one copy missing from those would say "not current" of a
 * hold a majority carries.
 */
function settledOn(carries: (r: FenceCheckReply) => boolean): (t: Tally<FenceCheckReply>) => boolean {
  return (t) => {
    let yes = 0
    let no = 0
    for (const a of t.answers) {
      if (!a.ok || !a.node.mayVote) continue
      if (carries(a.value)) yes++
      else no++
    }
    return yes >= t.majority || no >= t.majority
  }
}

/**
 * A read, like inspect: a majority of the answers that count (the vote rule) must be in, and a hold
 * counts while a majority of its copies is live and carries the fence.
 */
export async function checkFence(ctx: LockContext, namespace: Namespace, key: string, fence: number): Promise<FenceCheck> {
  const { quorum } = ctx
  const keys = lockKeys(ctx.config.keyPrefix, namespace, key)
  const carries = (r: FenceCheckReply) => r.writerFence === fence || r.readerHasFence
  const tally = await quorum.ask((node) => node.call(fenceCheckScript, keys.all, { fence }), settledOn(carries))
  const all = countedValues(tally)
  const majority = tally.majority
  if (all.length < majority) throw backendUnavailable(quorum, tally, 'no_majority')
  let writers = 0
  let carried = 0
  for (const r of all) {
    if (r.writerFence > 0) writers++
    if (carries(r)) carried++
  }
  const writerFence = writers >= majority ? consensus(all.flatMap((r) => (r.writerFence > 0 ? [r.writerFence] : []))) : 0
  const readersHeld = majorityFloor(
    all.map((r) => r.liveReaders),
    majority,
  )
  const current = carried >= majority
  const held = current || writerFence > 0 || readersHeld > 0
  // Several read or semaphore holds: the highest fence a majority shows a live hold at or above.
  const newest =
    writerFence > 0
      ? writerFence
      : readersHeld > 0
        ? majorityFloor(
            all.map((r) => r.highestReaderFence),
            majority,
          )
        : 0
  return { current, fence: current ? fence : newest > 0 ? newest : null, held }
}
