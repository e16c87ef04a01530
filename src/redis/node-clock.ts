import { performance } from 'node:perf_hooks'
import type { Metrics } from '../metrics.js'
import { ClockWatch, type ClockStatus } from './clock.js'
import { sampleMasterClocks } from './cluster.js'
import type { NodeLog } from './health.js'
import { isCluster, type RedisClient } from './topology.js'

/** Who a node's clock belongs to, for its metrics and log lines. */
export interface ClockOwner {
  index: number
  address: string
  client: RedisClient
  metrics: Metrics
  log: NodeLog | undefined
}

/**
 * The clock check of one voter (src/redis/clock.ts), in its two regimes: a standalone or Sentinel
 * node has one clock; a Redis Cluster decides a lock's expiry on its slot's master, so it has one
 * watch per master and counts while every one of them is trusted.
 */
export class NodeClock {
  /** The watch shown in the node's status (a cluster's: its first master's). */
  private watch: ClockWatch
  /** A cluster's: one clock watch per master ("host:port"). */
  private readonly masterClocks = new Map<string, ClockWatch>()
  /** A cluster's: rounds of master clock samples taken. */
  private masterRounds = 0

  constructor(
    private readonly owner: ClockOwner,
    private readonly driftFactor: number,
    private readonly probationMs: number,
  ) {
    this.watch = this.newWatch()
  }

  /** What changes with every clock sample: the watch's count, or a cluster's rounds over all masters. */
  get samples(): number {
    return isCluster(this.owner.client) ? this.masterRounds : this.watch.samplesTaken
  }

  /** A cluster's clock counts while every master's does. */
  trusted(now: number): boolean {
    if (!isCluster(this.owner.client)) return this.watch.trusted(now)
    if (this.masterClocks.size === 0) return false
    for (const watch of this.masterClocks.values()) if (!watch.trusted(now)) return false
    return true
  }

  status(now: number): ClockStatus {
    return this.watch.status(now)
  }

  /** Another server is behind this voter now (a Sentinel failover): its clock is another clock. */
  replaced(): void {
    this.watch = this.newWatch()
  }

  /** One TIME sample (one per master in a cluster); never rejects. */
  async sample(): Promise<void> {
    const { client } = this.owner
    if (isCluster(client)) return this.sampleMasters(client)
    const sentAt = performance.now()
    let time: [string, string]
    try {
      time = (await client.time()) as unknown as [string, string]
    } catch {
      return
    }
    const receivedAt = performance.now()
    const change = this.watch.add({ sentAt, receivedAt, nodeMs: Number(time[0]) * 1000 + Number(time[1]) / 1000 })
    const { index, address, metrics, log } = this.owner
    const node = String(index)
    const rate = this.watch.rate()
    if (rate !== null) metrics.nodeClockRate.set({ node }, rate)
    if (change === 'distrusted') {
      metrics.nodeClockDistrusted.inc({ node })
      log?.warn(
        { node: index, address, trustedInMs: this.watch.status(receivedAt).trustedInMs, why: this.watch.lastViolation },
        'redis node clock distrusted: its votes do not count until it has behaved for MAX_TTL_MS + MAX_LOCK_DELAY_MS',
      )
    } else if (change === 'trusted') {
      log?.info({ node: index, address }, 'redis node clock trusted again')
    }
  }

  /** A cluster: one sample per master, each into its own watch; watches of former masters are dropped. */
  private async sampleMasters(cluster: Parameters<typeof sampleMasterClocks>[0]): Promise<void> {
    const { index, metrics, log } = this.owner
    const samples = await sampleMasterClocks(cluster)
    const seen = new Set(samples.map((s) => s.address))
    for (const address of this.masterClocks.keys()) if (!seen.has(address)) this.masterClocks.delete(address)
    metrics.clusterMasters.set(samples.length)
    for (const { shard, address, sample } of samples) {
      metrics.clusterMasterUp.set({ shard: String(shard) }, sample ? 1 : 0)
      if (!sample) continue
      let watch = this.masterClocks.get(address)
      if (!watch) {
        watch = this.newWatch()
        this.masterClocks.set(address, watch)
      }
      const change = watch.add(sample)
      const rate = watch.rate()
      if (rate !== null) metrics.clusterMasterClockRate.set({ shard: String(shard) }, rate)
      if (change === 'distrusted') {
        metrics.nodeClockDistrusted.inc({ node: String(index) })
        log?.warn(
          { node: index, master: address, why: watch.lastViolation },
          'redis cluster master clock distrusted: the cluster does not count until it has behaved for MAX_TTL_MS + MAX_LOCK_DELAY_MS',
        )
      }
    }
    const first = this.masterClocks.values().next().value
    if (first) this.watch = first
    this.masterRounds++
  }

  private newWatch(): ClockWatch {
    return new ClockWatch(this.driftFactor, this.probationMs)
  }
}
