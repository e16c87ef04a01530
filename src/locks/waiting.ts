import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import type { LockKeys } from './keys.js'

/** How long a waiter keeps its place in line without its replica renewing it. */
export const WAITER_LEASE_MS = 3000
const TOUCH_EVERY_MS = 1000

/** The channel prefix of wake-up pushes; a replica listens on prefix + its id. */
export function wakePrefix(keyPrefix: string): string {
  return `${keyPrefix}wake:`
}

export type WakeReason = 'woken' | 'timer' | 'aborted'

/** One request parked in line on this replica. */
export class Waiter {
  private pending = false
  private resolveSleep: ((why: WakeReason) => void) | undefined
  /** performance.now() of the latest wake-up push, for the hand-off metric. */
  wokenAt: number | undefined

  constructor(
    readonly id: string,
    readonly keys: LockKeys,
    /** Place in line: '' lets Redis number arrivals (one node); a quorum needs one order on every node. */
    readonly place: string,
    /** The client hanging up, the replica shutting down (two listeners: cheaper than AbortSignal.any). */
    private readonly stops: readonly AbortSignal[],
  ) {}

  get aborted(): boolean {
    return this.stops.some((s) => s.aborted)
  }

  /** A push arrived: a sleeper wakes at once; a waiter still in an attempt will not sleep on it. */
  wake(): void {
    this.wokenAt = performance.now()
    if (this.resolveSleep) this.resolveSleep('woken')
    else this.pending = true
  }

  /** Sleep until woken, aborted, or `ms` ms (0: no timer). */
  sleep(ms: number): Promise<WakeReason> {
    if (this.aborted) return Promise.resolve('aborted')
    if (this.pending) {
      this.pending = false
      return Promise.resolve('woken')
    }
    return new Promise((resolve) => {
      const timer = ms > 0 ? setTimeout(() => done('timer'), ms) : undefined
      const onAbort = () => done('aborted')
      const done = (why: WakeReason) => {
        if (timer) clearTimeout(timer)
        for (const s of this.stops) s.removeEventListener('abort', onAbort)
        this.resolveSleep = undefined
        resolve(why)
      }
      for (const s of this.stops) s.addEventListener('abort', onAbort, { once: true })
      this.resolveSleep = done
    })
  }
}

/**
 * The waiters parked on this replica, and what keeps them honest: a subscription (one per node) on
 * which the Lua scripts push "your turn" to exactly the waiter(s) that can proceed, and a loop that
 * renews their leases in line about every second (a replica that dies stops blocking the line when
 * the leases lapse). No polling: a waiter sleeps until pushed, until the holds ahead of it lapse, or
 * until its wait runs out.
 */
export class WaitRoom {
  readonly replicaId = randomBytes(6).toString('base64url')
  private next = 0
  private readonly waiters = new Map<string, Waiter>()
  private readonly byLock = new Map<string, Set<Waiter>>()
  private readonly subscribers: Redis[] = []
  private readonly shutdown = new AbortController()
  private touchTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly quorum: Quorum,
    readonly wakePrefix: string,
    private readonly maxWaiters: number,
    private readonly metrics: Metrics,
  ) {}

  get size(): number {
    return this.waiters.size
  }

  get shuttingDown(): boolean {
    return this.shutdown.signal.aborted
  }

  async start(): Promise<void> {
    const channel = this.wakePrefix + this.replicaId
    for (const node of this.quorum.nodes) {
      const sub = node.client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResendUnfulfilledCommands: true })
      sub.on('error', () => undefined)
      sub.on('message', (_channel: string, id: string) => {
        const waiter = this.waiters.get(id)
        if (!waiter) return
        this.metrics.wakeups.inc()
        waiter.wake()
      })
      // Pushes sent while the subscription was down are lost: wake everyone to look again.
      let connectedBefore = false
      sub.on('ready', () => {
        if (connectedBefore) for (const w of this.waiters.values()) w.wake()
        connectedBefore = true
      })
      this.subscribers.push(sub)
      sub.subscribe(channel).catch(() => undefined)
    }
    this.touchTimer = setInterval(() => this.touchAll(), TOUCH_EVERY_MS)
    this.touchTimer.unref()
  }

  /** Park a request: it gets an id and a place in line, and leaves with `leave`. */
  park(keys: LockKeys, clientGone: AbortSignal): Waiter {
    if (this.shuttingDown) throw shuttingDown()
    if (this.waiters.size >= this.maxWaiters) {
      throw new ServiceError('too_many_waiters', `this replica already has ${this.maxWaiters} waiting requests (MAX_WAITERS); try again later`, {}, 1000)
    }
    const n = this.next++
    const id = `${this.replicaId}.${n.toString(36)}`
    const place = this.quorum.size === 1 ? '' : String(Date.now() * 1000 + (n % 1000))
    const waiter = new Waiter(id, keys, place, [clientGone, this.shutdown.signal])
    this.waiters.set(id, waiter)
    let group = this.byLock.get(keys.holds)
    if (!group) this.byLock.set(keys.holds, (group = new Set()))
    group.add(waiter)
    this.metrics.waiters.set(this.waiters.size)
    return waiter
  }

  /** Forget a waiter here and take it out of line on the given nodes (all by default). */
  leave(waiter: Waiter, onNodes = this.quorum.nodes): void {
    this.waiters.delete(waiter.id)
    const group = this.byLock.get(waiter.keys.holds)
    group?.delete(waiter)
    if (group?.size === 0) this.byLock.delete(waiter.keys.holds)
    this.metrics.waiters.set(this.waiters.size)
    for (const node of onNodes) node.run('leave', waiter.keys.all, [waiter.id]).catch(() => undefined)
  }

  /** Why a waiter stopped waiting without a grant. */
  abortReason(): ServiceError | undefined {
    return this.shuttingDown ? shuttingDown() : undefined
  }

  private touchAll(): void {
    for (const group of this.byLock.values()) {
      const ids = [...group].map((w) => w.id)
      const keys = group.values().next().value?.keys
      if (!keys || ids.length === 0) continue
      for (const node of this.quorum.nodes) node.run('touch', keys.all, ids).catch(() => undefined)
    }
  }

  /** SIGTERM: every parked waiter answers 503 shutting_down and leaves its place in line. */
  stopWaiting(): void {
    this.shutdown.abort()
  }

  async close(): Promise<void> {
    this.stopWaiting()
    if (this.touchTimer) clearInterval(this.touchTimer)
    await Promise.all(this.subscribers.map((s) => s.quit().catch(() => s.disconnect())))
  }
}

function shuttingDown(): ServiceError {
  return new ServiceError('shutting_down', 'this replica is shutting down; retry on another', {}, 1000)
}
