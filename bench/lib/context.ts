/**
 * What a scenario gets to work with: the servers under test (started on first use and shared by every
 * scenario of the run), fresh servers for scenarios that need a clean process, the load runner with
 * the run's settings, and `compare`, which measures several servers back to back, repetition by
 * repetition, so that the noise of this shared machine hits them alike.
 */
import path from 'node:path'
import { runLoad, type LoadResult, type LoadSpec } from './load.js'
import type { ClientKind } from './http-client.js'
import { repoRoot, startNodeServer, startRedisClusterNodes, startRedisNode, type HttpServer, type RedisNode } from './processes.js'
import { median, ratio } from './stats.js'
import { acquireRelease } from './flows.js'
import type { Coalescing } from '../../src/redis/coalesce.js'
import type { RedisTls } from '../../harness/redis-server.js'

const PRIME_MS = 1500
const BASELINE = 'bench/baseline-server.js'
/** Other processes busier than this (in cores) during a measured run make it suspect. */
export const NOISY_CORES = 0.15

export interface Settings {
  warmupMs: number
  durationMs: number
  reps: number
  client: ClientKind
  /** When set, every server process runs with --cpu-prof and writes its profile here on exit. */
  profileDir?: string
  /** Who batches the service's Redis writes (src/redis/coalesce.ts): ours when unset. */
  coalesce?: Coalescing
}

export interface ServiceOptions {
  /** How many Redis nodes (1 = single mode, 3/5/7 = quorum). Default 1. */
  nodes?: number
  /** Extra environment for the service (e.g. MAX_WAITERS). */
  env?: Record<string, string>
  /** Entry point, relative to the repository root (default dist/server.js): A/B runs of another build. */
  script?: string
  /** TLS (bench/scenarios/70-tls.ts): HTTPS for the service, and/or Redis nodes of its own that speak TLS only. */
  tls?: { https?: { certFile: string; keyFile: string; ca: string }; redis?: RedisTls }
}

/**
 * A server under test, under a name; `flow`: this variant's own flow instead of the run spec's;
 * `replicas`: more processes of the same service sharing the load (lib/load.ts).
 */
export type Variant = { name: string; server: HttpServer; flow?: LoadSpec['flow']; replicas?: readonly HttpServer[] }
/** A measured run's spec; warm-up, duration and client default to the run's settings. */
export type RunSpec = Omit<LoadSpec, 'server' | 'client' | 'warmupMs' | 'durationMs'> &
  Partial<Pick<LoadSpec, 'warmupMs' | 'durationMs' | 'client'>>

export class BenchContext {
  private readonly shared = new Map<string, Promise<HttpServer>>()
  private readonly redisPool: Promise<RedisNode>[] = []
  private freshCount = 0
  /** Every measured run of this benchmark, in order (for the noise summary). */
  readonly results: LoadResult[] = []

  constructor(
    readonly settings: Settings,
    readonly log: (line: string) => void,
  ) {}

  /** The first `n` Redis nodes of the run's pool (started on demand, shared by every service). */
  async redisNodes(n: number): Promise<RedisNode[]> {
    while (this.redisPool.length < n) this.redisPool.push(startRedisNode())
    return Promise.all(this.redisPool.slice(0, n))
  }

  /** The service on a Redis Cluster of `masters` masters (REDIS_MODE=cluster), shared by every scenario of the run. */
  clusterService(masters = 3): Promise<HttpServer> {
    return this.memo(`service-cluster${masters}`, async () =>
      this.startNode(`service-cluster${masters}`, 'dist/server.js', 'REDIS_URLS', await startRedisClusterNodes(masters), {
        REDIS_MODE: 'cluster',
      }),
    )
  }

  /** The trivial Fastify server answering the service's JSON shapes: this machine's HTTP ceiling. */
  baseline(): Promise<HttpServer> {
    return this.memo('baseline', () => this.startBaseline('baseline'))
  }

  /**
   * The baseline server doing the one Redis round trip per request that no lock service can avoid
   * (bench/baseline-server.js with BASELINE_REDIS_URL): the floor of Fastify + ioredis + Redis.
   */
  redisFloor(): Promise<HttpServer> {
    return this.memo('redis-floor', async () => this.startNode('redis-floor', BASELINE, 'BASELINE_REDIS_URL', await this.redisNodes(1)))
  }

  /** The service (`node dist/server.js`) on `nodes` Redis nodes, shared by every scenario of the run. */
  service(options: ServiceOptions = {}): Promise<HttpServer> {
    const nodes = options.nodes ?? 1
    const env = options.env
      ? `-${Object.entries(options.env)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`
      : ''
    const tls = `${options.tls?.https ? '-https' : ''}${options.tls?.redis ? '-rediss' : ''}`
    const name = `service-n${nodes}${env}${tls}${options.script ? `-${options.script}` : ''}`
    return this.memo(name, () => this.startService({ ...options, name }))
  }

  /**
   * Unmeasured load right after a shared server starts, so that its first measured run does not pay
   * for JIT compilation and cold connection pools the later ones do not.
   */
  private async prime(server: HttpServer): Promise<HttpServer> {
    await runLoad({ server, connections: 16, warmupMs: PRIME_MS, durationMs: 1, client: this.settings.client, flow: acquireRelease })
    await Promise.all(server.redis.map((r) => r.flush()))
    return server
  }

  /** A new service process nobody else uses (memory figures need one); the caller stops it. */
  async startService(options: ServiceOptions & { name?: string } = {}): Promise<HttpServer> {
    const { https, redis: redisTls } = options.tls ?? {}
    // TLS Redis nodes are the service's own: the pool's speak plain TCP.
    const redis = redisTls
      ? await Promise.all(Array.from({ length: options.nodes ?? 1 }, () => startRedisNode(redisTls)))
      : await this.redisNodes(options.nodes ?? 1)
    const tlsEnv = {
      ...(https ? { TLS_CERT_FILE: https.certFile, TLS_KEY_FILE: https.keyFile } : {}),
      ...(redisTls ? { REDIS_TLS_CA_FILE: redisTls.caFile } : {}),
    }
    return this.startNode(
      options.name ?? `service-fresh-${++this.freshCount}`,
      options.script ?? 'dist/server.js',
      'REDIS_URLS',
      redis,
      { ...options.env, ...tlsEnv },
      https?.ca,
    )
  }

  /** A new service process on these Redis nodes (e.g. one more replica on a cluster), primed; `env`: REDIS_MODE…. */
  async startServiceOn(name: string, redis: RedisNode[], env: Record<string, string> = {}): Promise<HttpServer> {
    return this.prime(await this.startNode(name, 'dist/server.js', 'REDIS_URLS', redis, env))
  }

  /** A new baseline process nobody else uses; the caller stops it. */
  startBaseline(name = `baseline-fresh-${++this.freshCount}`): Promise<HttpServer> {
    return this.startNode(name, BASELINE)
  }

  /** `node <script>` at LOG_LEVEL=warn (profiled when the run profiles), told its Redis nodes' URLs in `urlsVar`. */
  private startNode(
    name: string,
    script: string,
    urlsVar?: string,
    redis: RedisNode[] = [],
    env: Record<string, string> = {},
    tlsCa?: string,
  ): Promise<HttpServer> {
    const urls = urlsVar ? { [urlsVar]: redis.map((r) => r.url).join(',') } : {}
    const coalesce: Record<string, string> = this.settings.coalesce ? { LOCK_SERVICE_BENCH_COALESCING: this.settings.coalesce } : {}
    return startNodeServer({
      name,
      script,
      env: { LOG_LEVEL: 'warn', ...urls, ...coalesce, ...env },
      nodeArgs: this.profileArgs(name),
      redis,
      ...(tlsCa ? { tlsCa } : {}),
    })
  }

  /** One measured run with the run's settings (Redis nodes flushed first). */
  async load(server: HttpServer, spec: RunSpec): Promise<LoadResult> {
    await Promise.all(server.redis.map((r) => r.flush()))
    const result = await runLoad({
      warmupMs: this.settings.warmupMs,
      durationMs: this.settings.durationMs,
      client: this.settings.client,
      ...spec,
      server,
    })
    this.results.push(result)
    this.log(
      `  ${(server.name + (spec.replicas?.length ? ` +${spec.replicas.length}` : '')).padEnd(16)} c=${String(spec.connections).padEnd(3)}` +
        `${spec.client ? ` ${spec.client}` : ''} ${result.requestsPerSec.toFixed(0).padStart(6)} req/s` +
        `  p50 ${result.latencyMs.p50.toFixed(2)} ms  p99 ${result.latencyMs.p99.toFixed(2)} ms` +
        `  cpu: server ${result.cpu.serverCores.toFixed(2)} redis ${result.cpu.redisCores.toFixed(2)} loader ${result.cpu.loaderCores.toFixed(2)}` +
        ` other ${result.cpu.otherCores.toFixed(2)} steal ${result.cpu.stealCores.toFixed(2)}` +
        (result.cpu.otherCores > NOISY_CORES ? '  (NOISY: other processes were busy)' : '') +
        (result.errors > 0 ? `  ERRORS ${result.errors}: ${result.errorSamples.join(' | ')}` : ''),
    )
    return result
  }

  /**
   * `settings.reps` repetitions; each runs every variant back to back (order alternating from one
   * repetition to the next), so paired ratios compare runs that saw the same machine state.
   */
  async compare(variants: readonly Variant[], spec: RunSpec): Promise<Comparison> {
    const runs = new Map<string, LoadResult[]>(variants.map((v) => [v.name, []]))
    for (let rep = 0; rep < this.settings.reps; rep++) {
      const order = rep % 2 === 0 ? variants : [...variants].reverse()
      for (const v of order) {
        const own = { ...(v.flow ? { flow: v.flow } : {}), ...(v.replicas ? { replicas: v.replicas } : {}) }
        runs.get(v.name)?.push(await this.load(v.server, { ...spec, ...own }))
      }
    }
    return new Comparison(runs)
  }

  private memo(name: string, start: () => Promise<HttpServer>): Promise<HttpServer> {
    let server = this.shared.get(name)
    if (!server) {
      server = start().then((s) => this.prime(s))
      this.shared.set(name, server)
    }
    return server
  }

  private profileArgs(name: string): string[] {
    const dir = this.settings.profileDir
    return dir
      ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(repoRoot, dir)}`, `--cpu-prof-name=${name.replace(/[^\w.=,-]+/g, '_')}.cpuprofile`]
      : []
  }
}

/** The repetitions of several variants; medians, and paired ratios between variants. */
export class Comparison {
  constructor(readonly runs: ReadonlyMap<string, readonly LoadResult[]>) {}

  of(name: string): readonly LoadResult[] {
    const runs = this.runs.get(name)
    if (!runs) throw new Error(`no runs named ${name}`)
    return runs
  }

  /** Median over the repetitions of one figure of one variant. */
  median(name: string, pick: (r: LoadResult) => number): number {
    return median(this.of(name).map(pick))
  }

  /** Median over the repetitions of (figure of `a`) / (figure of `b`) in the same repetition; 1 when a is b. */
  ratio(a: string, b: string, pick: (r: LoadResult) => number): number {
    if (a === b) return 1
    const as = this.of(a)
    const bs = this.of(b)
    return median(as.map((r, i) => ratio(pick(r), pick(bs[i] as LoadResult))))
  }

  errors(name: string): number {
    return this.of(name).reduce((n, r) => n + r.errors, 0)
  }

  /** One warning line per variant whose runs had failed cycles (for a scenario's notes). */
  errorNotes(): string[] {
    return [...this.runs].flatMap(([name, runs]) => errorNotes(name, runs))
  }
}

export function errorNotes(name: string, runs: readonly LoadResult[]): string[] {
  const failed = runs.reduce((n, r) => n + r.errors, 0)
  if (failed === 0) return []
  const sample = runs.flatMap((r) => r.errorSamples)[0] ?? ''
  return [
    `**Warning:** ${name}: ${failed} failed cycles in ${runs.length} runs (first: \`${sample.replace(/`/g, "'")}\`); its figures are not comparable.`,
  ]
}
