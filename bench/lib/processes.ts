/**
 * The processes of a benchmark run. redis-servers come from the test harness
 * (harness/redis-server.ts). What the bench needs beyond it is here:
 *
 * - CPU and memory of a process, read from /proc (`ProcessStats`), and of the whole machine;
 * - the HTTP servers under test: the built service (`node dist/server.js`) and the baselines
 *   (`node bench/baseline-server.js`), plain `node` with `--cpu-prof` when profiling. The harness's
 *   `startService` runs `src/server.ts` through the tsx loader, which is not what ships and would
 *   change both the throughput and the memory figures.
 *
 * `stopAll()` stops everything, also on SIGINT/SIGTERM (`installCleanup`); on exit, leftovers are
 * killed, and a watchdog shell per HTTP server kills it if this process dies without exiting (the
 * harness does the same for its redis-servers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { configEnvNames } from '../../src/config.js'
import { freePort, startRedis, stopAll as stopAllRedis, type RedisProcess, type RedisTls } from '../../harness/redis-server.js'
import { serviceNodeFlags } from '../../harness/start-command.js'

const OUTPUT_LIMIT = 32_768
const STOP_TIMEOUT_MS = 10_000
const CLOCK_TICKS = clockTicks()

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')

/** CPU and memory of one process, from /proc. */
export class ProcessStats {
  constructor(readonly pid: number) {}

  /** Resident set size now (VmRSS) and its peak so far (VmHWM), in MiB. */
  memory(): { rssMb: number; peakRssMb: number } {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8')
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 }
  }

  /** CPU time (user + system) the process has used so far, in ms (resolution: one clock tick). */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Fields 14 and 15 of proc(5) (utime, stime); the slice starts at field 3.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  }
}

function clockTicks(): number {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })
  const n = Number(r.stdout?.trim())
  return Number.isFinite(n) && n > 0 ? n : 100
}

/**
 * Machine-wide CPU from /proc/stat, in ms: time in user, nice and system mode (what processes'
 * utime + stime add up to; interrupt time is left out), and time stolen by the hypervisor.
 */
export function machineCpuMs(): { machineBusy: number; machineSteal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? ''
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = line.trim().split(/\s+/).slice(1).map(Number)
  return { machineBusy: ((user + nice + system) * 1000) / CLOCK_TICKS, machineSteal: (steal * 1000) / CLOCK_TICKS }
}

// ---------------------------------------------------------------------------------------------
// redis-server (the test harness's), with what the bench reads from it

export interface RedisNode {
  readonly url: string
  /** The redis-server process (its pid from INFO), for CPU accounting. */
  readonly proc: ProcessStats
  readonly version: string
  /** FLUSHALL SYNC: every measured run starts on an empty keyspace. */
  flush(): Promise<void>
}

/** `tls`: a redis-server speaking TLS only (its url is rediss://). */
export async function startRedisNode(tls?: RedisTls): Promise<RedisNode> {
  return describeRedis(await startRedis(tls ? { tls } : {}))
}

/**
 * A Redis Cluster of `masters` masters and no replicas (the test harness's, harness/redis-cluster.ts):
 * one RedisNode per master, for CPU accounting and FLUSHALL; the service gets every URL as a seed.
 */
export async function startRedisClusterNodes(masters: number): Promise<RedisNode[]> {
  if (masters === 1) return [await describeRedis(await startOneMasterCluster())]
  const cluster = await startRedisClusterMode({ masters, replicasPerMaster: 0 })
  return Promise.all(cluster.nodes.map(describeRedis))
}

/**
 * A Redis Cluster of one master serving all 16384 slots: the cluster-mode baseline the scale scenario
 * compares 3 masters with (`redis-cli --cluster create` refuses fewer than 3 masters).
 */
async function startOneMasterCluster(): Promise<RedisProcess> {
  // A node that never met a peer does not know its own address: CLUSTER SLOTS would name it "".
  const redis = await startRedis({
    args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '1000', '--cluster-announce-ip', '127.0.0.1'],
  })
  await redisCall(redis, 'CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
  for (let tries = 0; !/^cluster_state:ok/m.test(String(await redisCall(redis, 'CLUSTER', 'INFO'))); tries++) {
    if (tries > 100) throw new Error(`the one-master cluster on ${redis.url} did not reach cluster_state:ok`)
    await sleep(50)
  }
  return redis
}

async function describeRedis(redis: RedisProcess): Promise<RedisNode> {
  const info = String(await redisCall(redis, 'INFO', 'server'))
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1]
  return {
    url: redis.url,
    proc: new ProcessStats(Number(field('process_id'))),
    version: field('redis_version') ?? 'unknown',
    flush: async () => void (await redisCall(redis, 'FLUSHALL', 'SYNC')),
  }
}

async function redisCall(redis: RedisProcess, ...args: [string, ...string[]]): Promise<unknown> {
  const client = redis.client({ maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {}) // the failed command rejects with the same error
  try {
    return await client.call(...args)
  } finally {
    client.disconnect()
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP servers (the service, the baselines)

/** An HTTP server process this run started. */
export class ServerProcess extends ProcessStats {
  private out = ''
  private gone = false
  private stopping: Promise<void> | undefined
  private readonly watchdog: ChildProcess | undefined
  readonly exited: Promise<void>

  constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    super(child.pid ?? NaN)
    const collect = (chunk: Buffer | string) => {
      this.out = (this.out + chunk.toString()).slice(-OUTPUT_LIMIT)
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    this.watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid)
    this.exited = new Promise((resolve) => {
      const onGone = () => {
        if (this.gone) return
        this.gone = true
        live.delete(this)
        killQuietly(this.watchdog?.pid, 'SIGKILL')
        resolve()
      }
      child.once('exit', onGone)
      child.once('error', (err) => {
        collect(`\n${err.message}\n`)
        onGone()
      })
    })
    live.add(this)
  }

  get running(): boolean {
    return !this.gone
  }

  /** The last 32 KiB the process wrote to stdout and stderr. */
  output(): string {
    return this.out
  }

  /** SIGTERM (the service drains and exits; --cpu-prof writes its profile), SIGKILL after 10 s. */
  stop(): Promise<void> {
    if (this.gone) return Promise.resolve()
    this.stopping ??= (async () => {
      killQuietly(this.child.pid, 'SIGTERM')
      const timer = setTimeout(() => killQuietly(this.child.pid, 'SIGKILL'), STOP_TIMEOUT_MS)
      await this.exited
      clearTimeout(timer)
    })()
    return this.stopping
  }

  killNow(): void {
    killQuietly(this.child.pid, 'SIGKILL')
    killQuietly(this.watchdog?.pid, 'SIGKILL')
  }
}

const live = new Set<ServerProcess>()

function killQuietly(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/** `read` returns at EOF, i.e. when this process is gone however it died; then it kills the server. */
function startWatchdog(pid: number): ChildProcess {
  const watchdog = spawn('sh', ['-c', 'read _; kill -9 "$1" 2>/dev/null', 'bench-watchdog', String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  watchdog.on('error', () => {})
  watchdog.unref()
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return watchdog
}

/** Stop every process still running: the HTTP servers, then the redis-servers they use. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()))
  await stopAllRedis()
}

let cleanupInstalled = false

/** Stop everything on SIGINT/SIGTERM (exit 130/143) and kill leftovers on any exit. */
export function installCleanup(log: (line: string) => void): void {
  if (cleanupInstalled) return
  cleanupInstalled = true
  let signalled = false
  // process.exit() runs the 'exit' hooks: this one's and the harness's (which SIGKILLs its redis-servers).
  const killAndExit = (code: number) => {
    for (const p of live) p.killNow()
    process.exit(code)
  }
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    if (signalled) killAndExit(code)
    signalled = true
    log(`\n${signal}: stopping every process this run started…`)
    setTimeout(() => killAndExit(code), STOP_TIMEOUT_MS + 2000).unref()
    void stopAll().finally(() => process.exit(code))
  }
  process.on('SIGINT', () => onSignal('SIGINT', 130))
  process.on('SIGTERM', () => onSignal('SIGTERM', 143))
  process.on('exit', () => {
    for (const p of live) p.killNow()
  })
}

export interface HttpServer {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly proc: ServerProcess
  /** The Redis nodes this server uses (none for the baseline). */
  readonly redis: readonly RedisNode[]
  /** An HTTPS server: the CA (PEM) its certificate comes from. */
  readonly tlsCa?: string
}

/** The lowest VmRSS (MiB) of each server, sampled once a second for `forMs` (both ends included). */
export async function lowestRss(servers: readonly HttpServer[], forMs: number): Promise<number[]> {
  const lowest = servers.map(() => Infinity)
  for (let t = 0; ; t += 1000) {
    servers.forEach((s, i) => {
      lowest[i] = Math.min(lowest[i] as number, s.proc.memory().rssMb)
    })
    if (t >= forMs) return lowest
    await sleep(1000)
  }
}

export interface NodeServerSpec {
  name: string
  /** Script path relative to the repository root, run by plain `node` (no loader). */
  script: string
  env?: Record<string, string>
  nodeArgs?: string[]
  redis?: readonly RedisNode[]
  /** It speaks HTTPS with a certificate from this CA (PEM). */
  tlsCa?: string
}

const READY_TIMEOUT_MS = 15_000

/**
 * The node flags the service runs with in production (package.json's start script): every server of a
 * run gets them, the baselines too, so that they compare on the same runtime.
 */
const productionNodeFlags = serviceNodeFlags()

/** Start `node <script>` with PORT/HOST set and wait until GET /readyz answers 200. */
export async function startNodeServer(spec: NodeServerSpec): Promise<HttpServer> {
  const host = '127.0.0.1'
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = spawn(process.execPath, [...productionNodeFlags, ...(spec.nodeArgs ?? []), spec.script], {
      cwd: repoRoot,
      env: { ...inheritedEnv(), ...spec.env, PORT: String(port), HOST: host },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const proc = new ServerProcess(spec.name, child)
    try {
      await waitReady(proc, host, port, '/readyz', spec.tlsCa)
    } catch (err) {
      await proc.stop()
      if (attempt < 3 && /EADDRINUSE/.test(proc.output())) continue
      throw err
    }
    return { name: spec.name, host, port, proc, redis: spec.redis ?? [], ...(spec.tlsCa ? { tlsCa: spec.tlsCa } : {}) }
  }
}

/** This process' environment less the service's own settings (AUTH_FILE, KEY_PREFIX, …): every run alike. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of configEnvNames) delete env[name]
  delete env.NODE_OPTIONS
  return env
}

async function waitReady(proc: ServerProcess, host: string, port: number, readyPath = '/readyz', tlsCa?: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.name} exited during start:\n${proc.output().trim()}`)
    if ((await readyzStatus(host, port, readyPath, tlsCa)) === 200) return
    await sleep(50)
  }
  throw new Error(`${proc.name} did not become ready within ${READY_TIMEOUT_MS} ms:\n${proc.output().trim()}`)
}

/** GET /readyz (or `readyPath`; over HTTPS with `tlsCa`) on a connection of its own; resolves with the status, or 0 when nothing answers. */
function readyzStatus(host: string, port: number, readyPath = '/readyz', tlsCa?: string): Promise<number> {
  return new Promise((resolve) => {
    const get = tlsCa === undefined ? http.get : https.get
    const req = get({ host, port, path: readyPath, agent: false, timeout: 1000, ...(tlsCa ? { ca: tlsCa } : {}) }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
  })
}

/** Whether Debian's etcd-server (the `etcd` command) is on the PATH. */
export function hasEtcd(): boolean {
  return spawnSync('etcd', ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * A one-member etcd (Debian's etcd-server) on free loopback ports, in a temp data dir removed when it
 * exits, with `--unsafe-no-fsync` (like the bench's redis-servers, nothing waits for the disk). Its
 * v3 HTTP gateway (the JSON API on the client port) is what the load generator talks to; ready when
 * GET /health answers 200.
 */
export async function startEtcd(name = 'etcd'): Promise<HttpServer> {
  const host = '127.0.0.1'
  for (let attempt = 1; ; attempt++) {
    const [port, peerPort] = [await freePort(), await freePort()]
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lock-service-bench-etcd-'))
    const client = `http://${host}:${port}`
    const child = spawn(
      'etcd',
      [
        `--name=${name}`,
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=http://${host}:${peerPort}`,
        `--initial-advertise-peer-urls=http://${host}:${peerPort}`,
        `--initial-cluster=${name}=http://${host}:${peerPort}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
        '--logger=zap',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const proc = new ServerProcess(name, child)
    void proc.exited.then(() => rmSync(dataDir, { recursive: true, force: true }))
    try {
      await waitReady(proc, host, port, '/health')
    } catch (err) {
      await proc.stop()
      if (attempt < 3 && /address already in use/.test(proc.output())) continue
      throw err
    }
    return { name, host, port, proc, redis: [] }
  }
}
