import type { Config } from '../config.js'
import type { ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { acquireOnce } from './attempt.js'
import { acquireWaiting } from './hand-off.js'
import { forceRelease, releaseHold, renewHold } from './holds.js'
import { checkFence, type FenceCheck } from './fence-check.js'
import { inspectLock } from './inspect.js'
import type { Namespace } from './keys.js'
import { listLocks, type LockPage } from './listing.js'
import type { LockContext } from './lock-context.js'
import type { AcquireRequest, Grant, LockMode, LockState, Release, ReleaseRequest, RenewRequest } from './types.js'
import type { WaitRoom } from './waiting.js'

/**
 * The lock engine: exclusive locks, read/write holds and semaphores' permits on a quorum of Redis
 * masters (one node is simply the quorum of one). Knows nothing of HTTP: answers with values, or
 * throws ServiceError. Each concern in a module of its own: an attempt with its fence commit and
 * rollback (attempt.ts), the wait in line and hand-offs (hand-off.ts), renew and release
 * (holds.ts), inspect (inspect.ts), semaphores' slots (slots.ts), reading the nodes' answers (votes.ts).
 */
export class LockEngine {
  private readonly ctx: LockContext

  constructor(quorum: Quorum, config: Config, room: WaitRoom, metrics: Metrics) {
    this.ctx = { quorum, config, room, metrics }
  }

  /**
   * One acquire: granted at once, or (waitMs > 0) after waiting in line until a release hands the
   * lock over or an expiry lets it through, or refused. A grant that races the client hanging up is
   * given back at once. The refusal of a request that does not wait (409 lock_held on a contended
   * lock, the hot path of contention) comes back as a value, not a rejection: a rejection costs every
   * layer it passes through a throw. Anything else (a refusal after waiting included) rejects.
   */
  acquire(req: AcquireRequest): Promise<Grant | ServiceError> {
    // A request that may wait takes its place in line with its first attempt. When this replica
    // cannot take another waiter, it still gets one try.
    return req.waitMs && this.ctx.room.hasRoom ? acquireWaiting(this.ctx, req, req.waitMs) : acquireOnce(this.ctx, req)
  }

  renew(req: RenewRequest): Promise<Grant> {
    return renewHold(this.ctx, req)
  }

  release(req: ReleaseRequest): Promise<Release> {
    return releaseHold(this.ctx, req)
  }

  /** Operators: drop the write hold, or the read or semaphore hold with `fence`, whoever holds it. */
  forceRelease(mode: LockMode, key: string, fence: number | undefined): Promise<Release> {
    return forceRelease(this.ctx, mode, key, fence)
  }

  /** A page of held locks whose key starts with `prefix` (see listing.ts). */
  list(namespace: Namespace, prefix: string, limit: number, cursor: string | undefined): Promise<LockPage> {
    const { quorum, config } = this.ctx
    const inspect = (key: string) => inspectLock(this.ctx, namespace, key, namespace !== 'lock')
    return listLocks({ quorum, keyPrefix: config.keyPrefix, inspect }, namespace, prefix, limit, cursor)
  }

  /** The state a majority agrees on. A hold counts while a majority of its copies is live. */
  inspect(namespace: Namespace, key: string, withReaders = false): Promise<LockState> {
    return inspectLock(this.ctx, namespace, key, withReaders)
  }

  /** Whether `fence` is a live hold's (a resource's check before it acts on a request carrying it). */
  checkFence(namespace: Namespace, key: string, fence: number): Promise<FenceCheck> {
    return checkFence(this.ctx, namespace, key, fence)
  }
}
