import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Config } from '../config.js'
import type { VacancyReason } from '../contract/words.js'
import { fail, ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { allSubscribed, type Subscription } from '../redis/node.js'
import type { Quorum } from '../redis/quorum.js'
import type { ElectionState, Elections, Leader } from './elections.js'
import { isoTime } from './iso-time.js'
import type { ClientGone } from './types.js'
import { lostChannel } from './watch.js'

/** The leader as observers see it (never its token). */
export interface LeaderView {
  candidate: string
  value: string | null
  term: number
  revision: number
  since: string
  remainingMs: number
}

/**
 * What an observer is told: the leader, or none. `term` is the leader's, or with no leader the term
 * that ended last (0: none known); `revision` the leader's (1 when elected, + 1 per proclaim), 0 with
 * no leader. `reason`: why the last term ended, when this replica saw it end.
 */
export interface Observed {
  term: number
  revision: number
  leader: LeaderView | null
  reason?: VacancyReason
}

/** A change, with the state after it. `resync`: the feed may have missed changes; this state replaces the observer's. */
export type FeedEvent = { event: 'elected' | 'proclaimed' | 'vacant' | 'resync'; state: Observed }

/** A margin past an expiry before looking again (the Redis clock may be a little behind ours). */
const EXPIRY_MARGIN_MS = 2
/** How long a feed that cannot read the election waits before it tries again. */
const RETRY_MS = 500

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex')
}

/** The reason a lost push gives (include/lost.lua), as a vacancy's. */
function vacancyOf(pushed: string): VacancyReason | undefined {
  if (pushed === 'released') return 'resigned'
  if (pushed === 'force_released' || pushed === 'session_lost') return pushed
  return undefined
}

/** What an observer saw: a term (`after`) and, when known, the revision (0: no leader after that term). */
export interface Seen {
  after: number
  revision?: number
}

/**
 * Whether `state` is newer than what the observer saw. States are ordered: term T's leader at revision
 * 1, 2, …, then no leader after term T, then anything of a greater term. `revision` absent: the
 * observer saw term T's leader (at any revision).
 */
export function isNewer(state: Observed, seen: Seen | undefined): boolean {
  if (!seen) return true
  if (state.term !== seen.after) return state.term > seen.after
  if (!state.leader) return seen.revision !== 0
  if (seen.revision === undefined || seen.revision === 0) return false
  return state.revision > seen.revision
}

/** Whether `state` is older than what the observer saw (the order of isNewer). */
export function isOlder(state: Observed, seen: Seen | undefined): boolean {
  if (!seen) return false
  if (state.term !== seen.after) return state.term < seen.after
  if (!state.leader) return false
  if (seen.revision === 0) return true
  return seen.revision !== undefined && state.revision < seen.revision
}

/**
 * A feed behind what an observer saw (from another replica) looks again; if it cannot read the
 * election, the observer is not told an older state, nor a guess: 503.
 */
export async function catchUp(feed: { refresh(): Promise<void>; error: ServiceError | undefined }): Promise<void> {
  await feed.refresh()
  if (feed.error) throw feed.error
}

/**
 * `state` as told to an observer that saw `seen`: never a term below the one it saw (another replica
 * told it that term; this one, reading nodes that have lost it, shows no leader after it instead).
 */
export function notBefore(state: Observed, seen: Seen | undefined): Observed {
  if (!seen || state.term >= seen.after) return state
  return { term: seen.after, revision: 0, leader: null }
}

/**
 * One election followed for the observers on this replica: looked at once (election_state.lua, which
 * flags the leader's hold as watched), then again on a push — the term's record or a proclaim
 * (election_stamp.lua), or the leader's hold going (include/lost.lua: resigned, force-released,
 * dropped with its session) — and when the leader's lease runs out, since an expiry is pushed by
 * nobody: as watches do, the feed times it from the remaining lease and looks again (a renewal just
 * moves the timer). Each look is compared with the last: never a term lower than one already told.
 */
class Feed {
  readonly listeners = new Set<(e: FeedEvent) => void>()
  state: Observed | undefined
  /** Why the latest look could not read the election (undefined: it could). */
  error: ServiceError | undefined
  /** The leader hold id pushes reach this feed by (ElectionFeeds.trackHold). */
  trackedHoldId: string | undefined
  /** Since when (performance.now()) the election has had no leader, while it has none. */
  leaderlessSince: number | undefined
  private leader: (Leader & { expiresAt: number }) | undefined
  private pushed: VacancyReason | undefined
  private wake: (() => void) | undefined
  private poked = false
  private resyncNeeded = false
  /** Told when the look under way (or the next) is done (refresh). */
  private afterLook: (() => void)[] = []
  private readonly firstLook: Promise<void>
  private settleFirst: (() => void) | undefined

  constructor(
    readonly name: string,
    readonly electionId: string,
    private readonly feeds: ElectionFeeds,
  ) {
    this.firstLook = new Promise((resolve) => (this.settleFirst = resolve))
  }

  /** Resolves once the feed has a state, or an error from its first look. */
  ready(): Promise<void> {
    return this.firstLook
  }

  get holdId(): string | undefined {
    return this.leader?.holdId
  }

  poke(): void {
    this.poked = true
    this.wake?.()
  }

  /** The leader's hold went (a push naming its id). */
  lost(reason: string): void {
    this.pushed ??= vacancyOf(reason)
    this.poke()
  }

  /**
   * Resolves after the next look (made at once), whether or not it could read the election; then
   * `error` says whether it could not.
   */
  refresh(): Promise<void> {
    return new Promise((resolve) => {
      this.afterLook.push(resolve)
      this.poke()
    })
  }

  /** A push may have been missed (the subscription reconnected): the next look is told as a resync. */
  resync(): void {
    this.resyncNeeded = true
    this.poke()
  }

  async run(): Promise<void> {
    try {
      while (this.listeners.size > 0 && !this.feeds.stopping) {
        this.poked = false
        const resync = this.resyncNeeded
        this.resyncNeeded = false
        let look: ElectionState
        const told = this.afterLook.splice(0)
        try {
          look = await this.feeds.elections.state(this.name, true)
        } catch (err) {
          for (const done of told) done()
          // Unknown meanwhile: once it can be read again, observers are told the state afresh.
          if (this.state) this.resyncNeeded = true
          this.error = err instanceof ServiceError ? err : fail.backendUnavailable('the election could not be read', {})
          this.settleFirst?.()
          await this.sleep(RETRY_MS)
          continue
        }
        this.error = undefined
        this.apply(look, resync)
        for (const done of told) done()
        this.settleFirst?.()
        this.settleFirst = undefined
        const leader = look.leader
        const next = leader ? leader.remainingMs + EXPIRY_MARGIN_MS : look.pendingMs > 0 ? look.pendingMs + EXPIRY_MARGIN_MS : Infinity
        await this.sleep(next)
      }
    } finally {
      this.feeds.forget(this)
      this.settleFirst?.()
      for (const done of this.afterLook.splice(0)) done()
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.poked || this.feeds.stopping || this.listeners.size === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => this.wake?.(), ms) : undefined
      this.wake = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve()
      }
    })
  }

  private apply(look: ElectionState, resync: boolean): void {
    const before = this.state
    const leader = look.leader
    const told = before ? Math.max(before.term, before.leader?.term ?? 0) : 0
    // Never a term going backwards (a node's stale answer, say): such a look changes nothing.
    if (leader && leader.term < told) return
    const now = performance.now()
    const previous = this.leader
    this.leader = leader ? { ...leader, expiresAt: now + leader.remainingMs } : undefined
    const next: Observed = leader
      ? { term: leader.term, revision: leader.revision, leader: viewOf(leader) }
      : { term: Math.max(look.term, told), revision: 0, leader: null }
    this.leaderlessSince = leader ? undefined : (this.leaderlessSince ?? now)
    if (!before) {
      this.state = next
      return
    }
    if (resync) {
      if (!leader && !before.leader && before.reason) next.reason = before.reason
      return this.emit('resync', next)
    }
    if (before.leader && leader && leader.term === before.leader.term) {
      this.pushed = undefined
      if (leader.revision > before.revision) return this.emit('proclaimed', next)
      this.state = next
      return
    }
    if (before.leader) {
      // The term told last is over: a vacant first, then the new leader if there is one already.
      const reason = this.pushed ?? (previous && now >= previous.expiresAt ? (previous.bound ? 'session_lost' : 'expired') : undefined)
      this.pushed = undefined
      const vacant: Observed = { term: before.leader.term, revision: 0, leader: null, ...(reason ? { reason } : {}) }
      if (reason && reason !== 'resigned' && reason !== 'force_released') this.feeds.metrics.electionVacancies.inc({ reason })
      this.emit('vacant', vacant)
      if (leader) return this.emit('elected', next)
      if (endedUnseen(look, vacant)) this.emit('vacant', next)
      return
    }
    if (leader) return this.emit('elected', next)
    if (endedUnseen(look, before)) this.emit('vacant', next)
  }

  private emit(event: FeedEvent['event'], state: Observed): void {
    this.state = state
    for (const listener of [...this.listeners]) listener({ event, state })
  }
}

/**
 * With no leader, whether a later term than `told` began and ended between two looks (a campaign and
 * resignation within ms through another replica): its vacancy is news. Not while a term is being begun:
 * the term shown is then only a number below it, and its stamp's push brings a look soon.
 */
function endedUnseen(look: ElectionState, told: Observed): boolean {
  return !look.leader && look.pendingMs === 0 && look.term > told.term
}

function viewOf(leader: Leader): LeaderView {
  return {
    candidate: leader.candidate,
    value: leader.revision > 0 && leader.value !== '' ? leader.value : null,
    term: leader.term,
    revision: leader.revision,
    since: isoTime(leader.sinceMs),
    remainingMs: leader.remainingMs,
  }
}

/** A long poll's answer: the state, and whether it differs from what the caller saw. */
export interface ObserveAnswer {
  state: Observed
  changed: boolean
}

/**
 * The observers of elections on this replica: one Feed per observed election, shared by all its
 * observers (long polls and event streams), fed by the pushes every replica hears on the lost channel
 * (one subscription per node, as Watchers has; its own, so that a reconnect — pushes may have been
 * missed, a node may have restarted — tells every feed to resync).
 */
export class ElectionFeeds {
  private readonly feeds = new Map<string, Feed>()
  /** Feeds by the ids pushes name: an election's (sha1 of its hash key), and its leader's hold's. */
  private readonly byId = new Map<string, Feed>()
  private readonly subscriptions: Subscription[] = []
  private readonly parked = new Set<() => void>()
  private observers = 0
  stopping = false

  constructor(
    readonly elections: Elections,
    private readonly quorum: Quorum,
    private readonly config: Config,
    readonly metrics: Metrics,
  ) {}

  /** Settles once every node confirmed the subscription (a push published before that is lost). */
  start(): Promise<void> {
    const channel = lostChannel(this.config.keyPrefix)
    for (const node of this.quorum.nodes) {
      const onPush = (message: string) => {
        const [id = '', reason = ''] = message.split('|')
        const feed = this.byId.get(id)
        if (!feed) return
        if (id === feed.electionId) feed.poke()
        else feed.lost(reason)
      }
      this.subscriptions.push(node.subscribe(channel, onPush, () => this.resyncAll()))
    }
    this.metrics.electionLeaderlessProbe.longest = () => {
      const now = performance.now()
      let longest = 0
      for (const feed of this.feeds.values()) {
        if (feed.leaderlessSince !== undefined && feed.state) longest = Math.max(longest, now - feed.leaderlessSince)
      }
      return longest / 1000
    }
    return allSubscribed(this.subscriptions)
  }

  /** Every feed: a push may have been missed. */
  resyncAll(): void {
    for (const feed of this.feeds.values()) feed.resync()
  }

  stopObserving(): void {
    this.stopping = true
    for (const wake of this.parked) wake()
    for (const feed of this.feeds.values()) feed.poke()
  }

  async close(): Promise<void> {
    this.stopObserving()
    await Promise.all(this.subscriptions.map((s) => s.close()))
  }

  /** `wake` is called when this replica stops observing (shutdown): an event stream ends. */
  onStop(wake: () => void): void {
    if (this.stopping) wake()
    else this.parked.add(wake)
  }

  offStop(wake: () => void): void {
    this.parked.delete(wake)
  }

  /** Called by a feed when its last observer left. */
  forget(feed: Feed): void {
    if (this.feeds.get(feed.name) === feed) this.feeds.delete(feed.name)
    if (this.byId.get(feed.electionId) === feed) this.byId.delete(feed.electionId)
    if (feed.trackedHoldId !== undefined && this.byId.get(feed.trackedHoldId) === feed) this.byId.delete(feed.trackedHoldId)
  }

  /**
   * Follow election `name`: `listener` gets each change from now on. Resolves with the feed once it
   * has a state (or rejects with the error of its first look); `stop` ends the following.
   */
  async follow(name: string, listener: (e: FeedEvent) => void): Promise<{ feed: Feed; stop: () => void }> {
    if (this.stopping) throw fail.shuttingDown()
    if (this.observers >= this.config.maxWaiters) {
      throw fail.tooManyWatchers(`this replica already has ${this.config.maxWaiters} observers (MAX_WAITERS); try again later`)
    }
    let feed = this.feeds.get(name)
    const fresh = !feed
    if (!feed) {
      feed = new Feed(name, sha1(this.elections.keys(name).hold.holds), this)
      this.feeds.set(name, feed)
      this.byId.set(feed.electionId, feed)
    }
    const following = feed
    // The leader's hold id follows each look: pushes naming it reach this feed.
    const track = (e: FeedEvent) => {
      this.trackHold(following)
      listener(e)
    }
    following.listeners.add(track)
    this.observers++
    this.metrics.electionObservers.set(this.observers)
    let stopped = false
    const stop = () => {
      if (stopped) return
      stopped = true
      following.listeners.delete(track)
      this.observers--
      this.metrics.electionObservers.set(this.observers)
      if (following.listeners.size === 0) following.poke()
    }
    // run() settles its own looks' errors; anything else ends the feed (its observers time out), never the process.
    if (fresh) following.run().catch(() => undefined)
    await following.ready()
    this.trackHold(following)
    if (!following.state) {
      stop()
      throw following.error ?? fail.backendUnavailable('the election could not be read', {})
    }
    return { feed: following, stop }
  }

  /** The leader's hold id names this feed (the previous leader's no longer does: its hold is gone). */
  private trackHold(feed: Feed): void {
    const id = feed.holdId
    if (id === feed.trackedHoldId || this.feeds.get(feed.name) !== feed) return
    if (feed.trackedHoldId !== undefined) this.byId.delete(feed.trackedHoldId)
    feed.trackedHoldId = id
    if (id !== undefined) this.byId.set(id, feed)
  }

  /**
   * A long poll: at once when the state differs from what the caller saw (`after`, `revision`), else
   * when it changes, else when the wait runs out (changed: false).
   */
  async observe(
    name: string,
    after: number | undefined,
    revision: number | undefined,
    waitMs: number,
    gone?: ClientGone,
  ): Promise<ObserveAnswer> {
    let wake: (() => void) | undefined
    /** An event came while waiting (set by the listener, cleared before each wait). */
    let changed: boolean | undefined
    const { feed, stop } = await this.follow(name, () => {
      changed = true
      wake?.()
    })
    const parked = () => wake?.()
    this.parked.add(parked)
    gone?.listen(parked)
    try {
      const seen = after === undefined ? undefined : { after, ...(revision === undefined ? {} : { revision }) }
      // Another replica may have told the caller more than this one's feed has seen yet: look again first.
      if (isOlder(feed.state as Observed, seen)) await catchUp(feed)
      const first = notBefore(feed.state as Observed, seen)
      if (isNewer(first, seen)) return { state: first, changed: true }
      const deadline = performance.now() + waitMs
      // Until the state is newer than what the caller saw (a resync that changes nothing waits on).
      for (let left = waitMs; left > 0; left = deadline - performance.now()) {
        changed = false
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
          if (gone?.gone || this.stopping) wake()
        })
        wake = undefined
        if (gone?.gone) throw fail.clientGone()
        const state = notBefore(feed.state ?? first, seen)
        if (isNewer(state, seen)) return { state, changed: true }
        if (this.stopping) throw fail.shuttingDown()
        if (!changed) break
      }
      return { state: notBefore(feed.state ?? first, seen), changed: false }
    } finally {
      this.parked.delete(parked)
      stop()
    }
  }
}
