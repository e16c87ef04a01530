import { NodeError, RedisNode, type NodeFailure, type NodeLog, type NodeStatus } from './node.js'
import type { Script, ScriptName } from './scripts.js'
import type { Metrics } from '../metrics.js'
import { RestartGuard } from './restarts.js'
import type { Topology } from './topology.js'
import { checkClusterSeeds } from './cluster.js'
import { coalescingFrom, holdRuleFor } from './coalesce.js'

/** What one node said: a reply, or why it gave none (still pending when the vote settled = timeout). */
export type Answer<T> = { node: RedisNode; ok: true; value: T } | { node: RedisNode; ok: false; reason: NodeFailure; message: string }

export interface Tally<T> {
  readonly size: number
  readonly majority: number
  readonly answers: readonly Answer<T>[]
  readonly pending: number
  /**
   * Each node's call, in node order, when the vote settled before every node answered: the answers
   * it settled without are still to come there.
   */
  readonly calls?: readonly Promise<T>[]
}

/**
 * Runs one call on every node in parallel and settles as soon as `settled` says the outcome is known
 * (typically: a majority for, or a majority against), or when every node has answered. Each node's
 * call is bounded by the node timeout, so a vote never outlasts it. N = 1 is the quorum of one.
 */
export class Quorum {
  readonly majority: number
  private readonly timers: NodeJS.Timeout[] = []

  constructor(
    readonly nodes: readonly RedisNode[],
    readonly metrics: Metrics,
  ) {
    if (nodes.length === 0) throw new Error('a quorum needs at least one node')
    this.majority = Math.floor(nodes.length / 2) + 1
  }

  /**
   * Runs a script on every node and ignores the answers: for bookkeeping that is safe to miss
   * (a stale entry is found again and cleaned up later), never for a decision.
   */
  everywhere<In>(script: Script<In, unknown>, keys: readonly string[], input: In): void {
    for (const node of this.nodes) node.call(script, keys, input).catch(() => undefined)
  }

  get size(): number {
    return this.nodes.length
  }

  ask<T>(call: (node: RedisNode) => Promise<T>, settled: (tally: Tally<T>) => boolean = () => false): Promise<Tally<T>> {
    return new Promise((resolve) => {
      const answers: Answer<T>[] = []
      const size = this.nodes.length
      // Each node's call, for a vote that settles before every answer (never with one node).
      const calls: Promise<T>[] | undefined = size > 1 ? [] : undefined
      let done = false
      const settle = () => {
        if (done) return
        const t: Tally<T> = { size, majority: this.majority, answers, pending: size - answers.length }
        // Every node answered: nothing can change this tally any more.
        if (t.pending === 0) {
          done = true
          resolve(t)
        } else if (settled(t)) {
          done = true
          resolve({ ...t, answers: [...answers], calls })
        }
      }
      for (const node of this.nodes) {
        const answer = call(node)
        calls?.push(answer)
        answer.then(
          (value) => {
            answers.push({ node, ok: true, value })
            settle()
          },
          (err: unknown) => {
            const failure = err instanceof NodeError ? err : new NodeError('error', String(err))
            answers.push({ node, ok: false, reason: failure.reason, message: failure.message })
            settle()
          },
        )
      }
    })
  }

  /** Node summary for 503 bodies: what each node did in this vote (a node that refused a connection is down). */
  describe(tally?: Tally<unknown>): (NodeStatus & { answered: boolean })[] {
    return this.nodes.map((n) => {
      const answer = tally?.answers.find((a) => a.node === n)
      const unreachable = answer !== undefined && !answer.ok && answer.reason === 'unavailable'
      return { ...n.status(), up: n.up && !unreachable, answered: tally === undefined ? n.up : answer?.ok === true }
    })
  }

  /**
   * Wait (bounded) for the first connections, so a fresh service does not answer 503 needlessly.
   * A configured node that is a replica is refused: a failover would promote a copy that lacks the
   * latest locks, so every lock node must be an independent master.
   */
  async connect(withinMs: number): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.waitUntilReady(withinMs)))
    const wrongMode = this.nodes.filter((n) => n.topology.mode === 'standalone' && n.clusterEnabled)
    if (wrongMode.length > 0) {
      const named = wrongMode.map((n) => `node ${n.index} (${n.address})`).join(', ')
      throw new Error(
        `${named} ${wrongMode.length === 1 ? 'is' : 'are'} part of a Redis Cluster ` +
          '(cluster_enabled:1): set REDIS_MODE=cluster and give its nodes as REDIS_URLS',
      )
    }
    for (const node of this.nodes) {
      const { topology } = node
      if (topology.mode === 'cluster') {
        const problems = await checkClusterSeeds(topology.seeds, withinMs, topology.tlsFiles)
        if (problems.length > 0) throw new Error(problems.join('; '))
      }
      if (topology.mode === 'sentinel' && !node.up) {
        throw new Error(
          `REDIS_MODE=sentinel: no primary named "${topology.name}" could be reached through the sentinels ` +
            `${topology.sentinels.map((s) => `${s.host}:${s.port}`).join(', ')} within ${withinMs} ms` +
            (node.health.lastError ? ` (${node.health.lastError.message})` : ''),
        )
      }
    }
    const replicas = this.nodes.filter((n) => n.isReplica)
    if (replicas.length > 0) {
      throw new Error(
        `REDIS_URLS must name independent masters, but ${replicas.map((n) => `node ${n.index} (${n.address})`).join(', ')} ` +
          `${replicas.length === 1 ? 'is a replica' : 'are replicas'}: failover setups lose locks`,
      )
    }
  }

  /** Per-node vote gauges, refreshed every second and before every scrape. */
  publishGauges(): void {
    for (const node of this.nodes) {
      const status = node.status()
      this.metrics.nodeVotes.set({ node: String(node.index) }, status.vote === 'counts' ? 1 : 0)
      this.metrics.nodeQuarantine.set({ node: String(node.index) }, status.quarantineMs / 1000)
    }
  }

  /** A background chore that stops when the quorum closes. */
  every(ms: number, chore: () => void): void {
    const timer = setInterval(chore, ms)
    timer.unref()
    this.timers.push(timer)
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer)
    await Promise.all(this.nodes.map((n) => n.close()))
  }
}

export interface QuorumOptions {
  timeoutMs: number
  maxTtlMs: number
  /** MAX_LOCK_DELAY_MS: how long after a hold lapses its node may still keep a lock-delay. */
  maxLockDelayMs: number
  driftFactor: number
  keyPrefix: string
  scripts: ReadonlyMap<ScriptName, string>
  /** REDIS_WAIT_REPLICAS */
  waitReplicas?: number
  log?: NodeLog
}

/** How often each node's clock is sampled, and (every RECORD_EVERY samples) restart records refreshed. */
const CLOCK_SAMPLE_MS = 1000
const RECORD_EVERY = 10

/**
 * The voters: one per standalone URL (1 = single, 3/5/7 = Redlock), or ONE for a whole Redis Cluster
 * or a Sentinel-managed primary (src/redis/topology.ts) — the same engine code path for all.
 */
export function createQuorum(targets: readonly (string | Topology)[], options: QuorumOptions, metrics: Metrics): Quorum {
  // What a node that forgot (restarted empty, or expired keys early by a clock jump) may have
  // forgotten that still matters: a hold (MAX_TTL_MS) and the lock-delay after it (MAX_LOCK_DELAY_MS).
  const rememberedMs = options.maxTtlMs + options.maxLockDelayMs
  const nodeOptions = {
    timeoutMs: options.timeoutMs,
    scripts: options.scripts,
    driftFactor: options.driftFactor,
    clockProbationMs: rememberedMs,
    holdRule: holdRuleFor(targets.length),
    sharesCalls: targets.length > 1,
    coalescing: coalescingFrom(process.env),
    ...(options.waitReplicas ? { waitReplicas: options.waitReplicas } : {}),
    ...(options.log ? { log: options.log } : {}),
  }
  const quorum = new Quorum(
    targets.map((target, index) => new RedisNode(index, target, nodeOptions, metrics)),
    metrics,
  )
  // A quorum of one has no peer to carry on with while a node waits out a restart: no quarantine.
  const guard =
    targets.length >= 3
      ? new RestartGuard(
          quorum.nodes,
          quorum.majority,
          rememberedMs * (1 + options.driftFactor),
          (i) => `${options.keyPrefix}node:${i}:runs`,
        )
      : undefined
  for (const node of quorum.nodes) if (guard) node.restartCheck = (n, identity) => guard.check(n, identity)
  let tick = 0
  quorum.every(CLOCK_SAMPLE_MS, () => {
    for (const node of quorum.nodes) void node.sampleClock()
    quorum.publishGauges()
    if (guard && ++tick % RECORD_EVERY === 0) guard.refresh()
  })
  return quorum
}
