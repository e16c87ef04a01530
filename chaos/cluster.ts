/**
 * The system under test, as real processes on loopback: N redis-servers (each with the clock shim
 * preloaded, so its wall clock can be bent), R service replicas, one TCP proxy per (replica, node)
 * pair, so a replica can be cut off from (or slowed on) one node while everyone else still reaches it,
 * and one in front of each replica, which the clients reach it through (its client link, to slow).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { clockShim, type ClockControl } from '../harness/clock-shim.js'
import { startRedisClusterMode, type RedisClusterProcesses } from '../harness/redis-cluster.js'
import { startRedisCluster, type RedisProcess, type Teardown } from '../harness/redis-server.js'
import { startService, type ServiceProcess } from '../harness/service-process.js'
import { startProxy, type Latency, type TcpProxy } from '../harness/tcp-proxy.js'

export interface ChaosNode {
  readonly index: number
  readonly redis: RedisProcess
  readonly clock: ClockControl
}

export interface Replica {
  readonly index: number
  /** The URL clients use: the front proxy to the current process; while the replica is down, the last one (requests fail). */
  url: string
  process: ServiceProcess | undefined
  /** The proxy in front of the current process (the client link), and the latency set on it (kept across restarts). */
  front: TcpProxy | undefined
  frontLatency: Latency | undefined
}

const RESTART_ATTEMPTS = 3

/** Cleanups run in reverse order, each on its own (one failing does not skip the others). */
class Cleanup implements Teardown {
  readonly #fns: (() => unknown)[] = []

  teardown(fn: () => unknown): void {
    this.#fns.push(fn)
  }

  async run(): Promise<void> {
    for (const fn of this.#fns.splice(0).reverse()) {
      try {
        await fn()
      } catch {
        // best effort: the exit hooks of the helpers kill whatever is left
      }
    }
  }
}

/** `--backend cluster`: a Redis Cluster of this many masters, each with this many replicas. */
export const CLUSTER_REPLICAS_PER_MASTER = 2
const CLUSTER_NODE_TIMEOUT_MS = 1000

export class Cluster {
  private constructor(
    readonly nodes: readonly ChaosNode[],
    /** proxies[replica][node] (none with a Redis Cluster: its clients must reach the addresses it announces) */
    readonly proxies: readonly (readonly TcpProxy[])[],
    readonly replicas: readonly Replica[],
    private readonly serviceEnv: Record<string, string>,
    private readonly cleanup: Cleanup,
    /** `--backend cluster`: the Redis Cluster (its shards are numbered like its masters at start) */
    readonly redisCluster?: RedisClusterProcesses,
  ) {}

  static async start(opts: {
    nodes: number
    replicas: number
    serviceEnv: Record<string, string>
    backend?: 'standalone' | 'cluster'
  }): Promise<Cluster> {
    if (opts.backend === 'cluster') return Cluster.startRedisCluster(opts)
    const cleanup = new Cleanup()
    try {
      const clocks = await Promise.all(Array.from({ length: opts.nodes }, () => clockShim()))
      const redis = await startRedisCluster(opts.nodes, { t: cleanup, env: (i) => clocks[i]!.env })
      const nodes = redis.map((r, index) => ({ index, redis: r, clock: clocks[index]! }))
      const proxies = await Promise.all(
        Array.from({ length: opts.replicas }, () => Promise.all(redis.map((r) => startProxy({ port: r.port }, { t: cleanup })))),
      )
      const replicas = proxies.map((_, index): Replica => ({
        index,
        url: '',
        process: undefined,
        front: undefined,
        frontLatency: undefined,
      }))
      const cluster = new Cluster(nodes, proxies, replicas, opts.serviceEnv, cleanup)
      await Promise.all(replicas.map((r) => cluster.restartReplica(r.index)))
      return cluster
    } catch (err) {
      await cleanup.run()
      throw err
    }
  }

  /**
   * A Redis Cluster of `nodes` masters with CLUSTER_REPLICAS_PER_MASTER replicas each (clock shims
   * preloaded), every service replica given every node as a seed and REDIS_MODE=cluster.
   */
  private static async startRedisCluster(opts: { nodes: number; replicas: number; serviceEnv: Record<string, string> }): Promise<Cluster> {
    const cleanup = new Cleanup()
    try {
      const total = opts.nodes * (1 + CLUSTER_REPLICAS_PER_MASTER)
      const clocks = await Promise.all(Array.from({ length: total }, () => clockShim()))
      const redisCluster = await startRedisClusterMode({
        t: cleanup,
        masters: opts.nodes,
        replicasPerMaster: CLUSTER_REPLICAS_PER_MASTER,
        nodeTimeoutMs: CLUSTER_NODE_TIMEOUT_MS,
        env: (i) => clocks[i]!.env,
      })
      const nodes = redisCluster.nodes.map((r, index) => ({ index, redis: r, clock: clocks[index]! }))
      const replicas = Array.from({ length: opts.replicas }, (_, index): Replica => ({
        index,
        url: '',
        process: undefined,
        front: undefined,
        frontLatency: undefined,
      }))
      const env = { ...opts.serviceEnv, REDIS_MODE: 'cluster', REDIS_URLS: redisCluster.urls.join(',') }
      const cluster = new Cluster(nodes, [], replicas, env, cleanup, redisCluster)
      await Promise.all(replicas.map((r) => cluster.restartReplica(r.index)))
      return cluster
    } catch (err) {
      await cleanup.run()
      throw err
    }
  }

  /** `--backend cluster`: the node that is master of shard `shard` now (shards: the masters at start, by first slot). */
  async masterOfShard(shard: number): Promise<RedisProcess> {
    if (!this.redisCluster) throw new Error('not a Redis Cluster')
    return this.redisCluster.masterOf(this.shardSlots[shard] ?? 0)
  }

  /** The first slot of each shard (redis-cli --cluster create splits the slots evenly, in order). */
  private get shardSlots(): number[] {
    const n = this.nodes.length / (1 + CLUSTER_REPLICAS_PER_MASTER)
    return Array.from({ length: n }, (_, i) => Math.ceil((16384 * i) / n))
  }

  get majority(): number {
    return Math.floor(this.nodes.length / 2) + 1
  }

  // Nodes

  pauseNode(i: number): void {
    this.node(i).redis.pause()
  }

  resumeNode(i: number): void {
    this.node(i).redis.resume()
  }

  /** SIGKILL: its data is gone (no persistence). */
  killNode(i: number): Promise<void> {
    return this.node(i).redis.kill()
  }

  /** Start again on the same port, empty, with the same clock shim. */
  restartNode(i: number): Promise<void> {
    return this.node(i).redis.restart()
  }

  // Network

  proxy(replica: number, node: number): TcpProxy {
    const proxy = this.proxies[replica]?.[node]
    if (!proxy) throw new Error(`no proxy for replica ${replica}, node ${node}`)
    return proxy
  }

  /** Latency on replica r's client link (`node` undefined) or on its link to node `node`; undefined lifts it. */
  setLatency(r: number, node: number | undefined, latency: Latency | undefined): void {
    if (node !== undefined) return this.proxy(r, node).setLatency(latency)
    const replica = this.replica(r)
    replica.frontLatency = latency
    replica.front?.setLatency(latency)
  }

  // Replicas

  /** SIGSTOP a replica's process (its connections stay open; requests queue in the kernel) / SIGCONT it. */
  pauseReplica(r: number): void {
    this.replica(r).process?.pause()
  }

  resumeReplica(r: number): void {
    this.replica(r).process?.resume()
  }

  killReplica(r: number): Promise<unknown> {
    const replica = this.replica(r)
    const proc = replica.process
    replica.process = undefined
    return proc ? proc.stop('SIGKILL') : Promise.resolve()
  }

  /** Start the replica (again), on a new port, reaching every node through its own proxies. */
  async restartReplica(r: number): Promise<void> {
    const replica = this.replica(r)
    const env = this.redisCluster ? this.serviceEnv : { ...this.serviceEnv, REDIS_URLS: this.proxies[r]!.map((p) => p.url).join(',') }
    let lastError: unknown
    for (let attempt = 0; attempt < RESTART_ATTEMPTS; attempt++) {
      try {
        const proc = await startService(env, { t: this.cleanup })
        const front = await startProxy({ port: Number(new URL(proc.url).port) }, { t: this.cleanup })
        front.setLatency(replica.frontLatency)
        const old = replica.front
        replica.process = proc
        replica.front = front
        replica.url = `http://${front.address}`
        await old?.close()
        return
      } catch (err) {
        lastError = err // e.g. not ready within its bound while a majority of nodes is down
        await sleep(500)
      }
    }
    throw lastError
  }

  /** Stop every process and proxy this cluster started. */
  close(): Promise<void> {
    return this.cleanup.run()
  }

  private node(i: number): ChaosNode {
    const node = this.nodes[i]
    if (!node) throw new Error(`no node ${i}`)
    return node
  }

  private replica(r: number): Replica {
    const replica = this.replicas[r]
    if (!replica) throw new Error(`no replica ${r}`)
    return replica
  }
}
