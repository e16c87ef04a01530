import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { lockKeys, type LockKeys } from './keys.js'
import { storageOf, type HoldKind, type LockMode } from './types.js'
import type { WaitRoom } from './waiting.js'

/** What every part of the lock engine works with (LockEngine makes one). */
export interface LockContext {
  readonly quorum: Quorum
  readonly config: Config
  readonly room: WaitRoom
  readonly metrics: Metrics
}

/** The keys of the lock a request of `mode` on `key` is about, and the kind of hold it keeps there. */
export function keysOf(ctx: LockContext, mode: LockMode, key: string): { keys: LockKeys; hold: HoldKind } {
  const { namespace, hold } = storageOf(mode)
  return { keys: lockKeys(ctx.config.keyPrefix, namespace, key), hold }
}
