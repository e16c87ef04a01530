/**
 * Child processes of a benchmark run: redis-server instances and HTTP servers (the service, the
 * baseline), each on a free loopback port. Everything started here is stopped by `stopAll()`, on
 * SIGINT/SIGTERM, on an uncaught error and on exit; a tiny watchdog shell per child also kills it if
 * this process dies without running any of those (SIGKILL, OOM).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { configEnvNames } from '../../src/config.js'

const OUTPUT_LIMIT = 32_768
const STOP_TIMEOUT_MS = 10_000
const CLOCK_TICKS = clockTicks()

/** One child process we own. */
export class Proc {
  private out = ''
  private exitedFlag = false
  readonly exited: Promise<void>
  private stopping: Promise<void> | undefined
  private readonly watchdog: ChildProcess | undefined

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    private readonly cleanupDir?: string,
  ) {
    const collect = (chunk: Buffer) => {
      this.out = (this.out + chunk.toString()).slice(-OUTPUT_LIMIT)
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    this.exited = new Promise((resolve) => {
      const gone = () => {
        if (this.exitedFlag) return
        this.exitedFlag = true
        live.delete(this)
        killQuietly(this.watchdog?.pid, 'SIGKILL')
        if (this.cleanupDir) rmSync(this.cleanupDir, { recursive: true, force: true })
        resolve()
      }
      child.once('exit', gone)
      child.once('error', (err) => {
        collect(Buffer.from(`\n${err.message}\n`))
        gone()
      })
    })
    this.watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid, cleanupDir)
    live.add(this)
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.name} has no pid`)
    return this.child.pid
  }

  get running(): boolean {
    return !this.exitedFlag
  }

  /** The last 32 KiB the process wrote to stdout and stderr. */
  output(): string {
    return this.out
  }

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

  /** SIGTERM (the service drains and exits; --cpu-prof writes its profile), SIGKILL after 10 s. */
  stop(): Promise<void> {
    if (this.exitedFlag) return Promise.resolve()
    this.stopping ??= (async () => {
      killQuietly(this.child.pid, 'SIGCONT')
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
    if (this.cleanupDir) rmSync(this.cleanupDir, { recursive: true, force: true })
  }
}

const live = new Set<Proc>()

/** Stop every process still running (servers before the Redis they use). */
export async function stopAll(): Promise<void> {
  const all = [...live]
  await Promise.all(all.filter((p) => !p.name.startsWith('redis')).map((p) => p.stop()))
  await Promise.all(all.filter((p) => p.name.startsWith('redis')).map((p) => p.stop()))
}

let cleanupInstalled = false

/** Stop everything on SIGINT/SIGTERM (exit 130/143) and kill leftovers on any exit. */
export function installCleanup(log: (line: string) => void): void {
  if (cleanupInstalled) return
  cleanupInstalled = true
  let signalled = false
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    if (signalled) {
      for (const p of live) p.killNow()
      process.exit(code)
    }
    signalled = true
    log(`\n${signal}: stopping every process this run started…`)
    const force = setTimeout(() => {
      for (const p of live) p.killNow()
      process.exit(code)
    }, STOP_TIMEOUT_MS + 2000)
    force.unref()
    void stopAll().finally(() => process.exit(code))
  }
  process.on('SIGINT', () => onSignal('SIGINT', 130))
  process.on('SIGTERM', () => onSignal('SIGTERM', 143))
  process.on('exit', () => {
    for (const p of live) p.killNow()
  })
}

function killQuietly(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/**
 * `read` returns at EOF, i.e. when this process is gone however it died; then it kills the child and
 * removes its temporary directory.
 */
function startWatchdog(pid: number, dir = ''): ChildProcess {
  const script = 'read _; kill -9 "$1" 2>/dev/null; [ -n "$2" ] && rm -rf "$2"'
  const watchdog = spawn('sh', ['-c', script, 'bench-watchdog', String(pid), dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  watchdog.on('error', () => {})
  watchdog.unref()
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return watchdog
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

// ---------------------------------------------------------------------------------------------
// redis-server

export interface RedisServer {
  readonly name: string
  readonly port: number
  readonly url: string
  readonly proc: Proc
  /** FLUSHALL SYNC: every measured run starts on an empty keyspace. */
  flush(): Promise<void>
  version(): Promise<string>
}

export async function startRedis(name: string): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-bench-redis-'))
    const child = spawn(
      process.env.REDIS_SERVER_BIN ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'no', '--loglevel', 'warning', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const proc = new Proc(name, child, dir)
    const url = `redis://127.0.0.1:${port}`
    try {
      await waitFor(proc, 5000, async () => (await redisCommand(url, ['PING'])) === 'PONG')
    } catch (err) {
      await proc.stop()
      if (attempt < 3 && /in use/i.test(proc.output())) continue
      throw err
    }
    return {
      name,
      port,
      url,
      proc,
      flush: async () => {
        await redisCommand(url, ['FLUSHALL', 'SYNC'])
      },
      version: async () => {
        const info = String(await redisCommand(url, ['INFO', 'server']))
        return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'
      },
    }
  }
}

async function redisCommand(url: string, args: [string, ...string[]]): Promise<unknown> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    return await client.call(...args)
  } finally {
    client.disconnect()
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP servers (the service, the baseline)

export interface HttpServer {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly proc: Proc
  /** The Redis nodes this server uses (none for the baseline). */
  readonly redis: readonly RedisServer[]
}

export interface NodeServerSpec {
  name: string
  /** Script path relative to the repository root, run by plain `node` (no loader). */
  script: string
  env?: Record<string, string>
  nodeArgs?: string[]
  redis?: readonly RedisServer[]
  readyTimeoutMs?: number
}

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')

/** Start `node <script>` with PORT/HOST set and wait until GET /readyz answers 200. */
export async function startNodeServer(spec: NodeServerSpec): Promise<HttpServer> {
  const host = '127.0.0.1'
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.script], {
      cwd: repoRoot,
      env: { ...inheritedEnv(), ...spec.env, PORT: String(port), HOST: host },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const proc = new Proc(spec.name, child)
    try {
      await waitFor(proc, spec.readyTimeoutMs ?? 15_000, async () => (await httpStatus(host, port, '/readyz')) === 200)
    } catch (err) {
      await proc.stop()
      if (attempt < 3 && /EADDRINUSE/.test(proc.output())) continue
      throw err
    }
    return { name: spec.name, host, port, proc, redis: spec.redis ?? [] }
  }
}

/** This process' environment less the service's own settings (AUTH_FILE, KEY_PREFIX, …): every run alike. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of configEnvNames) delete env[name]
  delete env.NODE_OPTIONS
  return env
}

/** GET a path; resolves with the status, or 0 when nothing answers. */
export function httpStatus(host: string, port: number, pathname: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: pathname, agent: false, timeout: 1000 }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
  })
}

/** One request, whole body as text (for checks outside measured runs). */
export function httpText(host: string, port: number, method: string, pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path: pathname, headers, agent: false, timeout: 5000 }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${pathname}: timed out`)))
    req.on('error', reject)
    req.end()
  })
}

async function waitFor(proc: Proc, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.name} exited during start:\n${proc.output().trim()}`)
    if (await probe().catch(() => false)) return
    await sleep(50)
  }
  throw new Error(`${proc.name} did not become ready within ${timeoutMs} ms:\n${proc.output().trim()}`)
}
