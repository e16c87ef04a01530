/**
 * The closed-loop load runner: `connections` virtual clients, each with its own keep-alive
 * connection, run a scenario's flow over and over (one flow run = one "cycle": e.g. acquire then
 * release). After a warm-up, every request completing inside the measured window is timed and
 * counted; afterwards no new cycle starts, in-flight ones get `drainMs` to finish, then the
 * connections are closed.
 *
 * CPU is sampled over the same window for the load generator (this process), the server under test
 * and its Redis nodes, so every figure can also be read as CPU per request. `replicas`: more
 * processes of the same service; connections are spread over all of them (connection c talks to the
 * (c mod n)-th), their CPU adds up to the server's, and `cpu.processes` has each process's share.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type ClientKind, type HttpConnection, type HttpResponse, type RequestOptions } from './http-client.js'
import { machineCpuMs, type HttpServer } from './processes.js'
import { Samples, type Percentiles } from './stats.js'

export interface FlowContext {
  /** 0 … connections − 1 */
  readonly conn: number
  /** How many cycles this connection has started before this one. */
  readonly iter: number
  /** Unique per load run and safe inside a lock key: use it to keep keys distinct across runs. */
  readonly runId: string
  /** Per-connection scratch space that lives across cycles (tokens, counters). */
  readonly state: Record<string, unknown>
  /** One timed request; `label` groups the figures (e.g. "acquire", "release"). */
  request(label: string, method: string, path: string, options?: RequestOptions): Promise<HttpResponse>
  /** Count an event inside the measured window (e.g. "granted", "held"). */
  count(name: string, by?: number): void
  /** Record a sample other than request latency inside the measured window (e.g. hand-off ms). */
  sample(name: string, value: number): void
  /** True while inside the measured window. */
  readonly measuring: boolean
}

export type Flow = (ctx: FlowContext) => Promise<void>

export interface LoadSpec {
  server: HttpServer
  /** More replicas of the same service, sharing the load with `server` (and usually its Redis nodes). */
  replicas?: readonly HttpServer[]
  connections: number
  warmupMs: number
  durationMs: number
  flow: Flow
  client: ClientKind
  /** How long cycles still running at the end may take before their connections are closed. */
  drainMs?: number
}

export interface LabelFigures {
  count: number
  perSec: number
  statuses: Record<string, number>
  latencyMs: Percentiles
}

export interface CpuFigures {
  /** CPU cores busy on average over the window, per process group. */
  loaderCores: number
  serverCores: number
  redisCores: number
  /** CPU µs spent per measured request. */
  loaderUsPerRequest: number
  serverUsPerRequest: number
  redisUsPerRequest: number
  /**
   * Cores busy in user/system mode outside the three above (other processes on this shared machine:
   * noise), and cores stolen by the hypervisor. Both should be near 0 for a trustworthy run.
   */
  otherCores: number
  stealCores: number
  /** Cores busy over the window per process: each server replica by name, each Redis node by URL. */
  processes: Record<string, number>
}

export interface LoadResult {
  server: string
  connections: number
  seconds: number
  cycles: number
  cyclesPerSec: number
  requests: number
  requestsPerSec: number
  /** Every measured request, all labels together. */
  latencyMs: Percentiles
  labels: Record<string, LabelFigures>
  counters: Record<string, number>
  samples: Record<string, Percentiles>
  errors: number
  errorSamples: string[]
  cpu: CpuFigures
}

let runCounter = 0

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const runId = `r${Date.now().toString(36)}${(runCounter++).toString(36)}`
  const { server } = spec
  const servers = [server, ...(spec.replicas ?? [])]
  const connections: HttpConnection[] = []
  const latency = new Map<string, Samples>()
  const statuses = new Map<string, Map<number, number>>()
  const counters = new Map<string, number>()
  const samples = new Map<string, Samples>()
  const errorSamples: string[] = []
  let errors = 0
  let cycles = 0
  let measuring = false
  let stopped = false

  const samplesFor = (map: Map<string, Samples>, name: string) => {
    let s = map.get(name)
    if (!s) {
      s = new Samples()
      map.set(name, s)
    }
    return s
  }

  const loop = async (conn: number) => {
    const target = servers[conn % servers.length] as HttpServer
    const connection = connect(spec.client, target.host, target.port, target.tlsCa)
    connections.push(connection)
    let iter = 0
    const state: Record<string, unknown> = {}
    const ctx: FlowContext = {
      conn,
      get iter() {
        return iter
      },
      runId,
      state,
      get measuring() {
        return measuring
      },
      request: async (label, method, path, options) => {
        const started = performance.now()
        const res = await connection.request(method, path, options)
        if (measuring) {
          samplesFor(latency, label).add(performance.now() - started)
          let byStatus = statuses.get(label)
          if (!byStatus) {
            byStatus = new Map()
            statuses.set(label, byStatus)
          }
          byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1)
        }
        return res
      },
      count: (name, by = 1) => {
        if (measuring) counters.set(name, (counters.get(name) ?? 0) + by)
      },
      sample: (name, value) => {
        if (measuring) samplesFor(samples, name).add(value)
      },
    }
    while (!stopped) {
      try {
        await spec.flow(ctx)
        if (measuring) cycles++
      } catch (err) {
        if (stopped) break
        if (measuring) {
          errors++
          if (errorSamples.length < 3) errorSamples.push((err instanceof Error ? err.message : String(err)).slice(0, 160))
        }
        await sleep(5)
      }
      iter++
    }
  }

  const loops = Array.from({ length: spec.connections }, (_, conn) => loop(conn))
  await sleep(spec.warmupMs)

  const cpuStart = cpuSnapshot(servers)
  const started = performance.now()
  measuring = true
  await sleep(spec.durationMs)
  measuring = false
  const seconds = (performance.now() - started) / 1000
  const cpuEnd = cpuSnapshot(servers)
  stopped = true

  const drained = Promise.allSettled(loops)
  await Promise.race([drained, sleep(spec.drainMs ?? 2000)])
  for (const c of connections) c.close()
  await drained

  const all = Samples.merge([...latency.values()])
  const requests = all.count
  const labels: Record<string, LabelFigures> = {}
  for (const [label, s] of latency) {
    labels[label] = {
      count: s.count,
      perSec: s.count / seconds,
      statuses: Object.fromEntries([...(statuses.get(label) ?? new Map<number, number>())].map(([k, v]) => [String(k), v])),
      latencyMs: s.percentiles(),
    }
  }
  const cores = (ms: number) => ms / 1000 / seconds
  const perReq = (ms: number) => (requests > 0 ? (ms * 1000) / requests : NaN)
  const loaderMs = cpuEnd.loader - cpuStart.loader
  const serverMs = cpuEnd.server - cpuStart.server
  const redisMs = cpuEnd.redis - cpuStart.redis
  return {
    server: server.name,
    connections: spec.connections,
    seconds,
    cycles,
    cyclesPerSec: cycles / seconds,
    requests,
    requestsPerSec: requests / seconds,
    latencyMs: all.percentiles(),
    labels,
    counters: Object.fromEntries(counters),
    samples: Object.fromEntries([...samples].map(([k, s]) => [k, s.percentiles()])),
    errors,
    errorSamples,
    cpu: {
      loaderCores: cores(loaderMs),
      serverCores: cores(serverMs),
      redisCores: cores(redisMs),
      loaderUsPerRequest: perReq(loaderMs),
      serverUsPerRequest: perReq(serverMs),
      redisUsPerRequest: perReq(redisMs),
      otherCores: Math.max(0, cores(cpuEnd.machineBusy - cpuStart.machineBusy - loaderMs - serverMs - redisMs)),
      stealCores: cores(cpuEnd.machineSteal - cpuStart.machineSteal),
      processes: Object.fromEntries([...cpuEnd.processes].map(([name, ms]) => [name, cores(ms - (cpuStart.processes.get(name) ?? ms))])),
    },
  }
}

/** CPU used so far (ms): by this process, by the servers, by their Redis nodes (each counted once), and by each of them. */
function cpuSnapshot(servers: readonly HttpServer[]) {
  const usage = process.cpuUsage()
  const processes = new Map<string, number>()
  for (const s of servers) processes.set(s.name, s.proc.cpuMs())
  const redis = new Map(servers.flatMap((s) => s.redis.map((r) => [r.url, r.proc.cpuMs()] as const)))
  for (const [url, ms] of redis) processes.set(url, ms)
  const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0)
  return {
    loader: (usage.user + usage.system) / 1000,
    server: sum(servers.map((s) => processes.get(s.name) ?? 0)),
    redis: sum(redis.values()),
    processes,
    ...machineCpuMs(),
  }
}
