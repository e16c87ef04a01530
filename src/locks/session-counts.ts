import { fail } from '../errors.js'
import type { Config } from '../config.js'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import { apiKeySessionsKey, sessionsIndexKey } from './keys.js'
import { keySessionsScript, type KeySessionsInput } from './scripts/key_sessions.js'
import { sessionsIndexScript } from './scripts/sessions_index.js'
import { backendUnavailable, countCode } from './votes.js'

/** How often the sessions gauge and the expiry count are brought up to date. */
const CENSUS_INTERVAL_MS = 5000

/**
 * Counting sessions, apart from the sessions themselves (each list under a hash tag of its own, so a
 * session's scripts never touch it): the live sessions of each API key (MAX_SESSIONS_PER_KEY,
 * key_sessions.lua) and of the whole service (the lock_sessions gauge and lock_session_expiries_total,
 * sessions_index.lua). Only opening asks for a decision; keeping alive and closing are best effort
 * (an entry outlives its session by a TTL at most).
 */
export class SessionCounts {
  private censusTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
    private readonly metrics: Metrics,
  ) {}

  /** A session `ref` opened by API key `by` ('' while the service runs open): 429 when the key has too many. */
  async open(by: string, ref: string, ttlMs: number): Promise<void> {
    const change: KeySessionsInput = { op: 'open', ref, ttlMs, maxSessions: this.config.maxSessionsPerKey }
    this.note(change)
    if (by === '') return
    const key = this.byKey(by)
    const tally = await this.quorum.ask(
      (node) => node.call(keySessionsScript, key, change),
      (t) => countCode(t, ReplyCode.NOTED) >= t.majority || countCode(t, ReplyCode.TOO_MANY_SESSIONS) >= t.majority,
    )
    if (countCode(tally, ReplyCode.NOTED) >= tally.majority) return
    this.quorum.everywhere(keySessionsScript, key, { op: 'close', ref })
    if (countCode(tally, ReplyCode.TOO_MANY_SESSIONS) >= tally.majority) throw fail.tooManySessions(by, this.config.maxSessionsPerKey)
    throw backendUnavailable(this.quorum, tally, 'no_majority')
  }

  /** A session kept alive for another `ttlMs`. */
  keep(by: string, ref: string, ttlMs: number): void {
    this.change(by, { op: 'keep', ref, ttlMs })
  }

  close(by: string, ref: string): void {
    this.change(by, { op: 'close', ref })
  }

  private change(by: string, change: KeySessionsInput): void {
    this.note(change)
    if (by !== '') this.quorum.everywhere(keySessionsScript, this.byKey(by), change)
  }

  /** The service's index of live sessions. */
  private note(change: KeySessionsInput): void {
    this.quorum.everywhere(sessionsIndexScript, [sessionsIndexKey(this.config.keyPrefix)], change)
  }

  private byKey(by: string): string[] {
    return [apiKeySessionsKey(this.config.keyPrefix, by)]
  }

  /**
   * The lock_sessions gauge and lock_session_expiries_total, every CENSUS_INTERVAL_MS: sessions_index.lua
   * on every node drops the sessions that lapsed and counts them (once per node, whichever replica
   * asks first), so the replicas' expiry counters add up to the service's. On a quorum the node that
   * knows most speaks (a restarted node knows none).
   */
  async census(): Promise<void> {
    const index = [sessionsIndexKey(this.config.keyPrefix)]
    const answers = await Promise.allSettled(this.quorum.nodes.map((node) => node.call(sessionsIndexScript, index, { op: 'census' })))
    let live = -1
    let expired = 0
    for (const a of answers) {
      if (a.status !== 'fulfilled' || a.value.code !== ReplyCode.COUNTED) continue
      live = Math.max(live, a.value.live)
      expired = Math.max(expired, a.value.expired)
    }
    if (live < 0) return
    this.metrics.sessions.set(live)
    if (expired > 0) this.metrics.sessionExpiries.inc(expired)
  }

  startCensus(): void {
    this.censusTimer = setInterval(() => void this.census().catch(() => undefined), CENSUS_INTERVAL_MS)
    this.censusTimer.unref()
  }

  stopCensus(): void {
    clearInterval(this.censusTimer)
  }
}
