import { performance } from 'node:perf_hooks'
import type { VoteState } from '../contract/words.js'
import type { Metrics } from '../metrics.js'
import type { NodeHealth, NodeLog } from './health.js'
import type { NodeClock } from './node-clock.js'
import type { RedisClient, Topology } from './topology.js'

/** What the node said about itself on connecting (INFO), for the restart check. */
export interface Identity {
  runId: string
  uptimeMs: number
  /** The run_id this replica saw before on this node, if any. */
  previousRunId: string | undefined
}

/** Whether a newly identified node may count, and from when (see src/redis/restarts.ts). */
export type RestartVerdict = { counts: true; quarantineUntil: number; restarted: boolean } | { counts: false; retryInMs: number }

export interface Voter {
  index: number
  address: string
  topology: Topology
  client: RedisClient
  clock: NodeClock
  /** One clock sample, skipped while not connected; never rejects. */
  sampleClock(): Promise<void>
  health: NodeHealth
  metrics: Metrics
  log: NodeLog | undefined
  /** The restart check (set by the quorum), or undefined: a node that counts at once. */
  restartCheck(identity: Identity): Promise<RestartVerdict> | undefined
}

const COUNTS_AT_ONCE: RestartVerdict = { counts: true, quarantineUntil: 0, restarted: false }

/**
 * Who a node is (INFO on every connection: role, run_id, uptime) and the vote rule, in one place: a
 * node's answer counts toward a majority (grants, hand-offs, renewals, fence commits, inspection)
 * only while it is `counts` (VoteState): connected, identified as a master whose restart history is
 * known, outside its delayed-restart quarantine, and with a trusted clock.
 */
export class VoteRule {
  private runId: string | undefined
  private role: string | undefined
  /** Set once the restart check let this connection's answers count (reset on every reconnect). */
  private checked = false
  /** performance.now() until which the node is in its delayed-restart quarantine. */
  private quarantinedUntil = 0
  /**
   * The clock's sample count when the rule last found the quarantine over and the clock trusted,
   * or -1: until the next sample or identification those time-bound parts stay as they were
   * (quarantine and probation only end, and only a sample or an identification starts them), so
   * the rule does not read the time again for every answer.
   */
  private timeChecksPassedAt = -1
  /** Bumped on every connection change, so a slow identification of an old connection is dropped. */
  private connection = 0
  /** INFO said cluster_enabled:1 (a standalone URL that points into a Redis Cluster is refused at start). */
  clusterEnabled = false
  /** When the node last started anew since this replica first met it (ms since the epoch), or undefined. */
  restartedAt: number | undefined

  constructor(private readonly voter: Voter) {}

  /** The vote rule (see VoteState), for a node that is connected (`up`) or not. */
  vote(up: boolean): VoteState {
    if (!up) return 'down'
    if (this.role !== undefined && this.role !== 'master') return 'replica'
    if (this.role === undefined || !this.checked) return 'identifying'
    const { clock } = this.voter
    if (this.timeChecksPassedAt === clock.samples) return 'counts'
    const now = performance.now()
    if (now < this.quarantinedUntil) return 'quarantined'
    if (!clock.trusted(now)) return 'clock_untrusted'
    this.timeChecksPassedAt = clock.samples
    return 'counts'
  }

  get isReplica(): boolean {
    return this.role !== undefined && this.role !== 'master'
  }

  /** Still to be told its role, or a master not yet through the restart check. */
  get identifying(): boolean {
    return this.role === undefined || (this.role === 'master' && !this.checked)
  }

  /** The run_id of the identified node, while connected and identified. */
  get identifiedRunId(): string | undefined {
    return this.checked ? this.runId : undefined
  }

  /** ms left of its delayed-restart quarantine (0: none). */
  quarantineMs(now: number): number {
    return Math.max(0, Math.ceil(this.quarantinedUntil - now))
  }

  connected(): void {
    this.connection++
    void this.identify(this.connection)
  }

  disconnected(): void {
    this.connection++
    this.role = undefined
    this.checked = false
  }

  /**
   * On every (re)connection: who is this (INFO: role, run_id, uptime), a first clock sample, then the
   * restart check. Until all three are done its answers do not count.
   */
  private async identify(connection: number): Promise<void> {
    const { voter } = this
    const retry = (ms: number) =>
      setTimeout(() => {
        if (connection === this.connection) void this.identify(connection)
      }, ms).unref()
    try {
      const info = await voter.client.info('server', 'replication', 'cluster')
      const runId = /^run_id:(\w+)/m.exec(info)?.[1] ?? ''
      const role = /^role:(\w+)/m.exec(info)?.[1]
      const uptimeMs = Number(/^uptime_in_seconds:(\d+)/m.exec(info)?.[1] ?? 0) * 1000
      if (connection !== this.connection) return
      this.clusterEnabled = /^cluster_enabled:1/m.test(info)
      // Sentinel: a failover puts another server behind this voter; its clock is another clock.
      if (voter.topology.mode === 'sentinel' && this.runId !== undefined && runId !== this.runId) {
        voter.clock.replaced()
        this.timeChecksPassedAt = -1
      }
      this.role = role
      voter.health.identified(role)
      if (role !== 'master') return
      await voter.sampleClock()
      const verdict = (await voter.restartCheck({ runId, uptimeMs, previousRunId: this.runId })) ?? COUNTS_AT_ONCE
      if (connection !== this.connection) return
      if (!verdict.counts) return void retry(verdict.retryInMs)
      const previous = this.runId
      this.runId = runId
      // Seen by this replica (another run_id than before) or by the quorum's peers (restarts.ts).
      if (verdict.restarted || (previous !== undefined && previous !== runId)) this.restarted(Date.now() - uptimeMs)
      if (verdict.quarantineUntil > performance.now()) this.quarantine(verdict.quarantineUntil)
      this.checked = true
    } catch {
      // Not identified yet: its answers do not count until it is.
      retry(500)
    }
  }

  /**
   * The node started anew (its run_id changed): a Redis without persistence lost every hold it had.
   * Said once per restart, in the log, /readyz (restartedAt) and redis_node_restarts_total. Fences go
   * on rising (the Redis TIME floor); on a quorum the restart check decides whether it may vote.
   */
  private restarted(startedAt: number): void {
    const { index, address, metrics, log, topology } = this.voter
    if (this.restartedAt !== undefined && Math.abs(this.restartedAt - startedAt) < 2000) return
    this.restartedAt = startedAt
    metrics.nodeRestarts.inc({ node: String(index) })
    log?.warn(
      { node: index, address, restartedAt: new Date(startedAt).toISOString() },
      topology.mode === 'sentinel'
        ? `redis node ${index} at ${address}: another server answers for it now (a failover); holds not yet replicated to it are gone`
        : `redis node ${index} at ${address} restarted (its run_id changed): holds on it may be gone (without persistence, ` +
            'all of them); fences stay strictly increasing',
    )
  }

  private quarantine(until: number): void {
    const { index, address, log } = this.voter
    this.quarantinedUntil = until
    this.timeChecksPassedAt = -1
    log?.warn(
      { node: index, address, quarantineMs: Math.round(until - performance.now()) },
      'redis node restarted recently and may have lost locks: its votes do not count until its quarantine ends',
    )
  }
}
