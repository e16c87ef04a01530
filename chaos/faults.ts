/**
 * The faults the nemesis applies, each as: how to pick its targets (a plan: pure data, drawn from the
 * seeded schedule), how to apply it, and how to heal it.
 *
 * `faulty` lists the nodes a fault makes faulty in Redlock's sense (unreachable for someone, paused,
 * lost its data, or a clock beyond the drift allowance): the scenario caps how many may be faulty at
 * once. A clock drifting within the allowance is not a fault: Redlock assumes exactly that much.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { RedisProcess } from '../harness/redis-server.js'
import type { LinkDelay } from '../harness/tcp-proxy.js'
import type { Cluster } from './cluster.js'
import type { ServiceSettings } from './options.js'
import { stream, type Rng } from './prng.js'

export type FaultName =
  | 'pause-node'
  | 'kill-node'
  | 'restart-node'
  | 'partition'
  | 'kill-replica'
  | 'clock-drift'
  | 'clock-fast'
  | 'clock-step'
  | 'host-crash'
  | 'kill-majority'
  | 'clock-fast-majority'
  | 'failover-master'
  | 'latency'
  | 'slow-redis'
  | 'pause-service'

export interface Targets {
  nodes: number[]
  replicas: number[]
  /** nodes counted as faulty while the fault lasts */
  faulty: number[]
  /** e.g. "silent", "rate 1.05" */
  detail: string
  /** set for clock faults: the rate or step applied, and whether it is within DRIFT_FACTOR */
  clock?: { rate?: number; stepMs?: number; withinAllowance: boolean }
  /** partitions: how the proxy is cut */
  cut?: 'reset' | 'silent'
  /** latency: the link slowed (a replica's client link, or its link to `nodes[0]`) and each direction's delay */
  latency?: { link: 'client' | 'node'; up: LinkDelay; down: LinkDelay }
  /** slow-redis: SIGSTOP bursts of these lengths, SIGCONT gaps between them, drawn from `seed` */
  bursts?: { stopMs: readonly [number, number]; runMs: readonly [number, number]; seed: number }
}

export interface PlanContext {
  nodes: number
  replicas: number
  majority: number
  /** nodes / replicas no other fault touches now */
  freeNodes: number[]
  freeReplicas: number[]
  /** replicas that may still be killed now (at least one stays up when there are several) */
  killableReplicas: number
  settings: ServiceSettings
}

export interface FaultKind {
  readonly name: FaultName
  /** how long it lasts, ms (default: the nemesis' 1–4 s) */
  readonly durationMs?: readonly [number, number]
  /**
   * The service keeps the node out of the vote for about MAX_TTL_MS + MAX_LOCK_DELAY_MS after the
   * heal, by design: the quarantine of a restarted node, the probation of a clock that left the allowance.
   */
  readonly sitsOut?: boolean
  /** Targets among the free ones, or undefined when this fault does not fit now. */
  plan(rng: Rng, ctx: PlanContext): Targets | undefined
  apply(cluster: Cluster, targets: Targets): Promise<void>
  heal(cluster: Cluster, targets: Targets): Promise<void>
}

/** The clock rates and step used: clearly inside, clearly outside the allowance. */
export const clockRates = (settings: ServiceSettings) => ({
  within: 1 + settings.driftFactor / 2,
  outside: 1 + settings.driftFactor * 5,
  farOutside: 1.5,
})
const CLOCK_STEP_MS = 2_000
/** Down this briefly, a node comes back empty while holds it had are still live: what a quarantine is for. */
const QUICK_RESTART_MS = [100, 600] as const

const each = (targets: number[], fn: (i: number) => unknown) => Promise.all(targets.map(async (i) => fn(i))).then(() => {})

function oneNode(rng: Rng, ctx: PlanContext, detail: string, faulty: boolean, clock?: Targets['clock']): Targets | undefined {
  if (ctx.freeNodes.length === 0) return undefined
  const node = rng.pick(ctx.freeNodes)
  return { nodes: [node], replicas: [], faulty: faulty ? [node] : [], detail, clock }
}

/** One node's clock running fast: within the allowance (not a fault) or outside it (a faulty node). */
function fastClock(rng: Rng, ctx: PlanContext, within: boolean): Targets | undefined {
  const rates = clockRates(ctx.settings)
  const rate = within ? rates.within : rates.outside
  return oneNode(rng, ctx, `rate ${rate} (${within ? 'within' : 'outside'} DRIFT_FACTOR)`, !within, { rate, withinAllowance: within })
}

function majorityOfNodes(rng: Rng, ctx: PlanContext, detail: string, clock?: Targets['clock']): Targets | undefined {
  if (ctx.freeNodes.length < ctx.majority) return undefined
  const nodes = rng.sample(ctx.freeNodes, ctx.majority).sort((a, b) => a - b)
  return { nodes, replicas: [], faulty: nodes, detail, clock }
}

const killNode = (cluster: Cluster, t: Targets) => each(t.nodes, (i) => cluster.killNode(i))
const restartNode = (cluster: Cluster, t: Targets) => each(t.nodes, (i) => cluster.restartNode(i))
const setRate = (cluster: Cluster, t: Targets) => each(t.nodes, (i) => cluster.nodes[i]!.clock.setRate(t.clock!.rate!))
/** Clocks beyond the allowance heal with a step back to real time (as an operator fixing it would). */
const resetClock = (cluster: Cluster, t: Targets) => each(t.nodes, (i) => cluster.nodes[i]!.clock.reset())

/** `--backend cluster`: the master of a shard, found when the fault starts (failovers move it), paused. */
const pausedMasters = new Map<number, RedisProcess>()

/** Added delay per direction: 0–300 ms, plus up to 100 ms of jitter, drawn apart for each direction. */
const LATENCY_MS = 300
const JITTER_MS = 100
const linkDelay = (rng: Rng): LinkDelay => ({ ms: rng.int(0, LATENCY_MS), jitterMs: rng.int(0, JITTER_MS) })

/** A slow Redis: stopped for bursts well under NODE_TIMEOUT_MS (a request waits, it does not time out), running in between. */
const burstsFor = (rng: Rng, settings: ServiceSettings): NonNullable<Targets['bursts']> => ({
  stopMs: [Math.min(10, settings.nodeTimeoutMs / 4), Math.max(10, Math.floor(settings.nodeTimeoutMs * 0.6))],
  runMs: [20, 200],
  seed: rng.int(0, 2 ** 31 - 1),
})
/** The burst loops running, per node: stopped by the heal. */
const burstLoops = new Map<number, { stop: () => Promise<void> }>()

function startBursts(cluster: Cluster, node: number, b: NonNullable<Targets['bursts']>): void {
  const rng = stream(b.seed, `bursts-${node}`)
  let running = true
  const loop = (async () => {
    while (running) {
      cluster.pauseNode(node)
      await sleep(rng.int(b.stopMs[0], b.stopMs[1]))
      cluster.resumeNode(node)
      if (running) await sleep(rng.int(b.runMs[0], b.runMs[1]))
    }
  })()
  burstLoops.set(node, {
    stop: async () => {
      running = false
      await loop
      cluster.resumeNode(node)
    },
  })
}

export const faultKinds: Readonly<Record<FaultName, FaultKind>> = {
  latency: {
    name: 'latency',
    // A slowed node link can make that node miss NODE_TIMEOUT_MS for one replica: counted as faulty.
    // A slowed client link faults no node; its grants arrive late (the clients then hold for less, or not at all).
    plan(rng, ctx) {
      if (ctx.freeReplicas.length === 0) return undefined
      const replica = rng.pick(ctx.freeReplicas)
      const up = linkDelay(rng)
      const down = linkDelay(rng)
      const delays = `up ${up.ms}+${up.jitterMs} ms, down ${down.ms}+${down.jitterMs} ms`
      if (ctx.freeNodes.length === 0 || rng.chance(0.5)) {
        return {
          nodes: [],
          replicas: [replica],
          faulty: [],
          detail: `clients → replica ${replica}: ${delays}`,
          latency: { link: 'client', up, down },
        }
      }
      const node = rng.pick(ctx.freeNodes)
      return {
        nodes: [node],
        replicas: [replica],
        faulty: [node],
        detail: `replica ${replica} → node ${node}: ${delays}`,
        latency: { link: 'node', up, down },
      }
    },
    apply: async (cluster, t) => cluster.setLatency(t.replicas[0]!, t.latency!.link === 'node' ? t.nodes[0]! : undefined, t.latency),
    heal: async (cluster, t) => cluster.setLatency(t.replicas[0]!, t.latency!.link === 'node' ? t.nodes[0]! : undefined, undefined),
  },
  'slow-redis': {
    name: 'slow-redis',
    plan: (rng, ctx) => {
      const bursts = burstsFor(rng, ctx.settings)
      const target = oneNode(
        rng,
        ctx,
        `SIGSTOP bursts of ${bursts.stopMs[0]}–${bursts.stopMs[1]} ms, ${bursts.runMs[0]}–${bursts.runMs[1]} ms apart`,
        true,
      )
      return target && { ...target, bursts }
    },
    apply: async (cluster, t) => each(t.nodes, (i) => startBursts(cluster, i, t.bursts!)),
    heal: async (_cluster, t) =>
      each(t.nodes, async (i) => {
        await burstLoops.get(i)?.stop()
        burstLoops.delete(i)
      }),
  },
  'pause-service': {
    name: 'pause-service',
    // Longer than every client TTL (at most 1.5 s): the holds granted through it lapse while it is stopped.
    durationMs: [2_000, 4_500],
    plan(rng, ctx) {
      if (ctx.freeReplicas.length === 0 || ctx.killableReplicas < 1) return undefined
      return { nodes: [], replicas: [rng.pick(ctx.freeReplicas)], faulty: [], detail: 'SIGSTOP, then SIGCONT' }
    },
    apply: async (cluster, t) => each(t.replicas, (r) => cluster.pauseReplica(r)),
    heal: async (cluster, t) => each(t.replicas, (r) => cluster.resumeReplica(r)),
  },
  'failover-master': {
    name: 'failover-master',
    // Longer than cluster-node-timeout (1 s) plus an election: the shard's replica takes over; when
    // the old master resumes it becomes a replica of the new one.
    durationMs: [2_500, 4_000],
    plan: (rng, ctx) => oneNode(rng, ctx, 'SIGSTOP the master of this shard: a replica is promoted', true),
    apply: async (cluster, t) =>
      each(t.nodes, async (shard) => {
        const master = await cluster.masterOfShard(shard)
        pausedMasters.set(shard, master)
        master.pause()
      }),
    heal: async (cluster, t) =>
      each(t.nodes, (shard) => {
        pausedMasters.get(shard)?.resume()
        pausedMasters.delete(shard)
      }),
  },
  'pause-node': {
    name: 'pause-node',
    plan: (rng, ctx) => oneNode(rng, ctx, 'SIGSTOP', true),
    apply: async (cluster, t) => each(t.nodes, (i) => cluster.pauseNode(i)),
    heal: async (cluster, t) => each(t.nodes, (i) => cluster.resumeNode(i)),
  },
  'kill-node': {
    name: 'kill-node',
    sitsOut: true,
    plan: (rng, ctx) => oneNode(rng, ctx, 'SIGKILL, restarted empty', true),
    apply: killNode,
    heal: restartNode,
  },
  'restart-node': {
    name: 'restart-node',
    sitsOut: true,
    durationMs: QUICK_RESTART_MS,
    plan: (rng, ctx) => oneNode(rng, ctx, 'SIGKILL, restarted empty at once', true),
    apply: killNode,
    heal: restartNode,
  },
  partition: {
    name: 'partition',
    plan(rng, ctx) {
      if (ctx.freeNodes.length === 0 || ctx.freeReplicas.length === 0) return undefined
      const node = rng.pick(ctx.freeNodes)
      const replica = rng.pick(ctx.freeReplicas)
      const cut = rng.chance(0.5) ? 'silent' : 'reset'
      return { nodes: [node], replicas: [replica], faulty: [node], detail: `replica ${replica} ↮ node ${node}, ${cut}`, cut }
    },
    apply: async (cluster, t) => cluster.proxy(t.replicas[0]!, t.nodes[0]!).cut(t.cut ?? 'reset'),
    heal: async (cluster, t) => cluster.proxy(t.replicas[0]!, t.nodes[0]!).heal(),
  },
  'kill-replica': {
    name: 'kill-replica',
    plan(rng, ctx) {
      if (ctx.freeReplicas.length === 0 || ctx.killableReplicas < 1) return undefined
      return { nodes: [], replicas: [rng.pick(ctx.freeReplicas)], faulty: [], detail: 'SIGKILL, restarted' }
    },
    apply: (cluster, t) => each(t.replicas, (r) => cluster.killReplica(r)),
    heal: (cluster, t) => each(t.replicas, (r) => cluster.restartReplica(r)),
  },
  'clock-drift': {
    name: 'clock-drift',
    plan: (rng, ctx) => fastClock(rng, ctx, true),
    apply: setRate,
    // Back to rate 1 with no step: the small lead it gained stays (a step back would itself be a clock fault).
    heal: (cluster, t) => each(t.nodes, (i) => cluster.nodes[i]!.clock.setRate(1)),
  },
  'clock-fast': {
    name: 'clock-fast',
    sitsOut: true,
    plan: (rng, ctx) => fastClock(rng, ctx, false),
    apply: setRate,
    heal: resetClock,
  },
  'clock-step': {
    name: 'clock-step',
    sitsOut: true,
    plan: (rng, ctx) => oneNode(rng, ctx, `step +${CLOCK_STEP_MS} ms`, true, { stepMs: CLOCK_STEP_MS, withinAllowance: false }),
    apply: (cluster, t) => each(t.nodes, (i) => cluster.nodes[i]!.clock.step(t.clock!.stepMs!)),
    heal: resetClock,
  },
  'host-crash': {
    name: 'host-crash',
    sitsOut: true,
    plan(rng, ctx) {
      if (ctx.freeNodes.length === 0 || ctx.freeReplicas.length === 0 || ctx.killableReplicas < 1) return undefined
      const node = rng.pick(ctx.freeNodes)
      const replica = rng.pick(ctx.freeReplicas)
      return { nodes: [node], replicas: [replica], faulty: [node], detail: `node ${node} + replica ${replica} SIGKILL, restarted` }
    },
    apply: async (cluster, t) => {
      await Promise.all([killNode(cluster, t), each(t.replicas, (r) => cluster.killReplica(r))])
    },
    heal: async (cluster, t) => {
      await restartNode(cluster, t)
      await each(t.replicas, (r) => cluster.restartReplica(r))
    },
  },
  'kill-majority': {
    name: 'kill-majority',
    sitsOut: true,
    durationMs: QUICK_RESTART_MS,
    plan: (rng, ctx) => majorityOfNodes(rng, ctx, 'a majority SIGKILLed at once, restarted empty'),
    apply: killNode,
    heal: restartNode,
  },
  'clock-fast-majority': {
    name: 'clock-fast-majority',
    sitsOut: true,
    plan(rng, ctx) {
      const rate = clockRates(ctx.settings).farOutside
      return majorityOfNodes(rng, ctx, `rate ${rate} on a majority`, { rate, withinAllowance: false })
    },
    apply: setRate,
    heal: resetClock,
  },
}
