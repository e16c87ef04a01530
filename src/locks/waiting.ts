import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { allSubscribed, type RedisNode, type Subscription } from '../redis/node.js'
import { fail, type ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import type { LockKeys } from './keys.js'
import type { ClientGone, HoldKind } from './types.js'
import { fenceHint } from './fence-hint.js'
import { leaveScript } from './scripts/leave.js'
import { touchScript } from './scripts/touch.js'

/** How long a waiter keeps its place in line without its replica renewing it. */
export const WAITER_LEASE_MS = 3000
const TOUCH_EVERY_MS = 1000

/** The channel prefix of wake-up pushes; a replica listens on prefix + its id. */
export function wakePrefix(keyPrefix: string): string {
  return `${keyPrefix}wake:`
}

export type WakeReason = 'woken' | 'timer' | 'aborted'

/** A node handed the lock straight to this waiter (include/queue.lua hand_off). */
interface HandOff {
  fence: number
  /** The node's clock (µs) when it handed over: the hold's TTL runs from then. */
  redisUs: number
  /** A semaphore's: the slots handed over ("0,3"); '' for any other hold. */
  slots: string
}

/** A hand-off this waiter can count as a node's vote, with how long ago (at most) the node granted it. */
export interface HandOffVote {
  index: number
  fence: number
  elapsedMs: number
  slots: string
}

/** One request parked in line on this replica. */
export class Waiter {
  private pending = false
  private resolveSleep: ((why: WakeReason) => void) | undefined
  /** When the sleep runs out (performance.now() ms), and this waiter's place in `alarms` (-1: none). */
  alarmAt = 0
  alarmIndex = -1
  /** performance.now() of the latest wake-up push, for the hand-off metric. */
  wokenAt: number | undefined
  /**
   * The latest attempt's refusals: for node i, [2i] when the attempt was sent (performance.now() ms)
   * and [2i + 1] the node's clock (µs) when it refused; NaN where it has not. One array of unboxed
   * doubles, sized on first use: an array of objects cost a parked waiter ~0.2 KB.
   */
  private refusals: number[] | undefined
  /** By node index; allocated on first use. */
  private handOffs: (HandOff | undefined)[] | undefined
  private attempts = 0

  private stopped = false

  constructor(
    readonly id: string,
    readonly keys: LockKeys,
    /** Place in line: '' lets Redis number arrivals (one node); a quorum needs one order on every node. */
    readonly place: string,
    clientGone: ClientGone | undefined,
  ) {
    clientGone?.listen(this)
  }

  /** The client hung up, or the replica is shutting down. */
  get aborted(): boolean {
    return this.stopped
  }

  stop(): void {
    this.stopped = true
    this.endSleep('aborted')
  }

  /** A push arrived: a sleeper wakes at once; a waiter still in an attempt will not sleep on it. */
  wake(): void {
    this.wokenAt = performance.now()
    if (this.resolveSleep) this.endSleep('woken')
    else this.pending = true
  }

  /** The sleep (if any) ends, for `why`. */
  endSleep(why: WakeReason): void {
    const resolve = this.resolveSleep
    if (!resolve) return
    this.resolveSleep = undefined
    alarms.remove(this)
    resolve(why)
  }

  /** Node `index` handed the lock over to this waiter. */
  handedOff(index: number, fence: number, redisUs: number, slots: string): void {
    this.handOffs ??= []
    this.handOffs[index] = { fence, redisUs, slots }
    this.wake()
  }

  /**
   * A new attempt, sent at `sentAt`: what the nodes said before no longer dates anything, and a
   * hand-off pushed before this attempt reached a node is taken up by it. Returns where the nodes'
   * answers to this attempt go (answers to an older attempt, arriving late, are ignored).
   */
  asking(sentAt: number): { answered(index: number, refusedAtUs: number | undefined): void } {
    const attempt = ++this.attempts
    this.refusals = undefined
    this.handOffs = undefined
    return {
      answered: (index, refusedAtUs) => {
        if (attempt !== this.attempts) return
        if (refusedAtUs === undefined) {
          // It granted (taking up any hand-off) or failed: a push from it now is spent.
          if (this.handOffs) this.handOffs[index] = undefined
        } else {
          const refusals = this.refusalsFor(index)
          refusals[2 * index] = sentAt
          refusals[2 * index + 1] = refusedAtUs
        }
      },
    }
  }

  /** `refusals`, long enough for node `index` (a quorum's nodes answer in any order). */
  private refusalsFor(index: number): number[] {
    const had = this.refusals
    if (had && had.length > 2 * index) return had
    // Allocated at its size, all NaN (doubles from the start): an array grown by push reserves 17 slots.
    const refusals = new Array<number>(2 * index + 2).fill(NaN)
    had?.forEach((v, i) => (refusals[i] = v))
    this.refusals = refusals
    return refusals
  }

  get handOffCount(): number {
    return this.handOffs?.filter((h) => h !== undefined).length ?? 0
  }

  /**
   * The hand-offs that count as grants: pushed by a node after it refused this waiter's latest
   * attempt (so not one that attempt took up; a node yet to answer it counts not). The node's hold
   * runs from its clock at the hand-off; here that moment is no earlier than the refused attempt's
   * send time plus the node's clock advance since (less the allowed drift and 1 ms of rounding),
   * which bounds the time elapsed.
   */
  handOffVotes(driftFactor: number): HandOffVote[] {
    const votes: HandOffVote[] = []
    const now = performance.now()
    const refusals = this.refusals
    this.handOffs?.forEach((h, index) => {
      const sentAt = refusals?.[2 * index] ?? NaN
      const refusedAtUs = refusals?.[2 * index + 1] ?? NaN
      // Not refused by that node (NaN compares false): no vote.
      if (!h || !(h.redisUs > refusedAtUs)) return
      const advanceMs = ((h.redisUs - refusedAtUs) / 1000) * (1 - driftFactor)
      votes.push({ index, fence: h.fence, elapsedMs: Math.max(0, now - sentAt - advanceMs + 1), slots: h.slots })
    })
    return votes
  }

  /** Sleep until woken, aborted, or `ms` ms (0: no timer). */
  sleep(ms: number): Promise<WakeReason> {
    if (this.aborted) return Promise.resolve('aborted')
    if (this.pending) {
      this.pending = false
      return Promise.resolve('woken')
    }
    // The state lives in the waiter's fields and one timer serves every sleeper: no closure or
    // Timeout per parked request (10,000 of them are parked at once).
    return new Promise((resolve) => {
      this.resolveSleep = resolve
      // Whole milliseconds (a small integer is stored unboxed), rounded up: never earlier than asked.
      if (ms > 0) alarms.add(this, Math.ceil(performance.now() + ms))
    })
  }
}

/**
 * The sleeping waiters by when their sleep runs out, earliest first (a binary heap), and one timer,
 * for the earliest: a Timeout each would cost a parked request ~0.2 KB (the Timeout, its boxed
 * numbers, its arguments). A sleep ends no earlier than asked, as with setTimeout.
 */
class Alarms {
  private readonly heap: Waiter[] = []
  private timer: NodeJS.Timeout | undefined
  /** When the timer fires (Infinity: not set). */
  private timerAt = Infinity

  add(waiter: Waiter, at: number): void {
    waiter.alarmAt = at
    waiter.alarmIndex = this.heap.length
    this.heap.push(waiter)
    this.up(waiter.alarmIndex)
    if (at < this.timerAt) this.arm(at)
  }

  /** Takes `waiter` out (if in); the timer stays: firing early only re-arms it. */
  remove(waiter: Waiter): void {
    const i = waiter.alarmIndex
    if (i < 0) return
    waiter.alarmIndex = -1
    const last = this.heap.pop() as Waiter
    if (last !== waiter) {
      this.place(last, i)
      this.down(i)
      this.up(last.alarmIndex)
    }
    if (this.heap.length === 0) this.disarm()
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(ring, Math.max(1, at - performance.now()), this)
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.timerAt = Infinity
  }

  /** The timer fired: every sleep due ends; the timer is set for the next one. */
  ring(): void {
    this.timer = undefined
    this.timerAt = Infinity
    const now = performance.now()
    for (let first = this.heap[0]; first && first.alarmAt <= now; first = this.heap[0]) {
      this.remove(first)
      first.endSleep('timer')
    }
    const next = this.heap[0]
    if (next) this.arm(next.alarmAt)
  }

  private place(waiter: Waiter, i: number): void {
    this.heap[i] = waiter
    waiter.alarmIndex = i
  }

  private up(i: number): void {
    const waiter = this.heap[i] as Waiter
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = this.heap[parent] as Waiter
      if (above.alarmAt <= waiter.alarmAt) break
      this.place(above, i)
      i = parent
    }
    this.place(waiter, i)
  }

  private down(i: number): void {
    const waiter = this.heap[i] as Waiter
    const n = this.heap.length
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      const right = this.heap[child + 1]
      if (right && right.alarmAt < (this.heap[child] as Waiter).alarmAt) child++
      const below = this.heap[child] as Waiter
      if (below.alarmAt >= waiter.alarmAt) break
      this.place(below, i)
      i = child
    }
    this.place(waiter, i)
  }
}

function ring(alarms: Alarms): void {
  alarms.ring()
}

const alarms = new Alarms()

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
  /** The locks whose waiters look again once a node is back (lookAgainWhenBack). */
  private readonly lookAgain = new Map<RedisNode, Set<string>>()
  private readonly subscriptions: Subscription[] = []
  private stopping = false
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
    return this.stopping
  }

  /**
   * Subscribes to this replica's wake-up channel on every node; settles once they have confirmed it
   * (a push published before that is lost: its waiter would sleep until its wait ran out).
   */
  start(): Promise<void> {
    const channel = this.wakePrefix + this.replicaId
    for (const node of this.quorum.nodes) {
      const onPush = (message: string) => this.deliver(node.index, message)
      // Pushes sent while the subscription was down are lost: everyone looks again, once the node
      // answers calls too (its subscription may be back first; an attempt before would fail).
      const onReconnect = () =>
        void node.waitUntilReady(WAITER_LEASE_MS).then(() => {
          for (const w of this.waiters.values()) w.wake()
        })
      this.subscriptions.push(node.subscribe(channel, onPush, onReconnect))
    }
    this.touchTimer = setInterval(() => this.touchAll(), TOUCH_EVERY_MS)
    this.touchTimer.unref()
    return allSubscribed(this.subscriptions)
  }

  /**
   * A push from node `index` to one of this replica's waiters, published on the wake-up channel or
   * answered in the reply of a release this replica sent: "<id>" look again; "<id>|<fence>|<Redis
   * µs>[|<slots>]" handed over (src/lua/include/queue.lua).
   */
  deliver(index: number, message: string): void {
    const [id = '', fence, redisUs, slots = ''] = message.split('|')
    const waiter = this.waiters.get(id)
    if (!waiter) return
    this.metrics.wakeups.inc()
    if (fence === undefined) waiter.wake()
    else waiter.handedOff(index, Number(fence), Number(redisUs), slots)
  }

  /**
   * A release this replica sent to `node` got no answer: it may have handed the lock (whose holds are
   * at `holds`) to one of this replica's waiters, with no push but its reply. Those waiters look again
   * once the node is back (a waiter's lease at most), and their attempt takes up what was handed over.
   */
  lookAgainWhenBack(node: RedisNode, holds: string): void {
    if (!this.byLock.has(holds)) return
    // One wait per node, however many releases fail while it is down.
    const pending = this.lookAgain.get(node)
    if (pending) {
      pending.add(holds)
      return
    }
    const locks = new Set([holds])
    this.lookAgain.set(node, locks)
    void node.waitUntilReady(WAITER_LEASE_MS).then(() => {
      this.lookAgain.delete(node)
      for (const lock of locks) for (const waiter of this.byLock.get(lock) ?? []) waiter.wake()
    })
  }

  /** Whether `park` would take another waiter. */
  get hasRoom(): boolean {
    return !this.shuttingDown && this.waiters.size < this.maxWaiters
  }

  /** Why `park` takes no waiter now: shutting down, or full. */
  noRoom(): ServiceError {
    if (this.shuttingDown) return fail.shuttingDown()
    return fail.tooManyWaiters(`this replica already has ${this.maxWaiters} waiting requests (MAX_WAITERS); try again later`)
  }

  /** Park a request: it gets an id and a place in line, and leaves with `leave`. */
  park(keys: LockKeys, clientGone: ClientGone | undefined): Waiter {
    if (!this.hasRoom) throw this.noRoom()
    const n = this.next++
    const id = `${this.replicaId}.${n.toString(36)}`
    const place = this.quorum.size === 1 ? '' : String(Date.now() * 1000 + (n % 1000))
    let group = this.byLock.get(keys.holds)
    if (!group) {
      group = new Set()
      this.byLock.set(keys.holds, group)
    }
    // The waiters of one lock share one LockKeys (~0.5 KB each otherwise).
    const waiter = new Waiter(id, group.values().next().value?.keys ?? keys, place, clientGone)
    this.waiters.set(id, waiter)
    group.add(waiter)
    this.metrics.waiters.set(this.waiters.size)
    return waiter
  }

  /**
   * Forget a waiter here and take it out of line on the given nodes (all by default). `giveBack`
   * (a waiter that was not granted): also drop a hold a node handed to it, so the lock moves on.
   */
  leave(waiter: Waiter, onNodes = this.quorum.nodes, giveBack?: { hold: HoldKind; token: string }): void {
    this.waiters.delete(waiter.id)
    const group = this.byLock.get(waiter.keys.holds)
    group?.delete(waiter)
    if (group?.size === 0) this.byLock.delete(waiter.keys.holds)
    this.metrics.waiters.set(this.waiters.size)
    const leave = { waiterId: waiter.id, hold: giveBack?.hold ?? '', token: giveBack?.token ?? '', fenceHint: fenceHint() }
    for (const node of onNodes) node.call(leaveScript, waiter.keys.all, leave).catch(() => undefined)
  }

  /** Why a waiter stopped waiting without a grant. */
  abortReason(): ServiceError | undefined {
    return this.shuttingDown ? fail.shuttingDown() : undefined
  }

  private touchAll(): void {
    for (const group of this.byLock.values()) {
      const waiterIds = [...group].map((w) => w.id)
      const keys = group.values().next().value?.keys
      if (!keys || waiterIds.length === 0) continue
      this.quorum.everywhere(touchScript, keys.all, { fenceHint: fenceHint(), waiterIds })
    }
  }

  /** SIGTERM: every parked waiter answers 503 shutting_down and leaves its place in line. */
  stopWaiting(): void {
    this.stopping = true
    for (const waiter of this.waiters.values()) waiter.stop()
  }

  async close(): Promise<void> {
    this.stopWaiting()
    if (this.touchTimer) clearInterval(this.touchTimer)
    await Promise.all(this.subscriptions.map((s) => s.close()))
  }
}
