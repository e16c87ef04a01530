/**
 * Starts real redis-server processes on free ports for tests.
 *
 * Processes never outlive the test process: they are killed on 'exit', and
 * each one also has a tiny watchdog shell that kills it when our end of a
 * pipe closes, which covers the cases where 'exit' never fires (tap's
 * SIGTERM on timeout, SIGKILL, crashes).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis, type RedisOptions } from 'ioredis'

/**
 * A redis-server that speaks only TLS (`--port 0 --tls-port <port>`), to clients, replicas and cluster
 * peers. The harness's own connections (readiness probe, `client()`, `keys()`) trust `caFile` and
 * present `clientCert` when given (needed with `authClients: 'yes'`).
 */
export interface RedisTls {
  certFile: string
  keyFile: string
  caFile: string
  /** `--tls-auth-clients`: whether clients must present a certificate from `caFile` (default 'no'). */
  authClients?: 'no' | 'optional' | 'yes'
  clientCert?: { certFile: string; keyFile: string }
}

export interface RedisProcess {
  readonly port: number
  /** `redis://127.0.0.1:${port}` (`rediss://` over TLS) */
  readonly url: string
  /** `127.0.0.1:${port}` */
  readonly address: string
  /** Whether the process is running (not killed or stopped). */
  readonly alive: boolean
  /** SIGKILL and wait for exit; data is lost (no persistence). */
  kill(): Promise<void>
  /** SIGTERM and wait for exit; idempotent. */
  stop(): Promise<void>
  /** Start again on the SAME port with empty data; resolves once it answers. */
  restart(): Promise<void>
  /** SIGSTOP: the server keeps its sockets but answers nothing. */
  pause(): void
  /** SIGCONT */
  resume(): void
  /** The TLS settings it was started with, if any. */
  readonly tls: RedisTls | undefined
  /** A fresh ioredis client (caller quits it; over TLS when the server speaks it). `options` override the defaults. */
  client(options?: RedisOptions): Redis
  /** Every key => `type|ttl-or-persist|value`, taken atomically, for "nothing changed" assertions. */
  keys(): Promise<Record<string, string>>
}

/** The part of a tap `t` used to register cleanup. */
export interface Teardown {
  teardown(fn: () => unknown): void
}

const REDIS_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server'
const READY_TIMEOUT_MS = 5_000
const STOP_TIMEOUT_MS = 5_000
const PORT_ATTEMPTS = 3
const OUTPUT_LIMIT = 16_384

interface Instance {
  readonly child: ChildProcess
  readonly dir: string
  readonly exited: Promise<void>
  readonly output: () => string
  readonly watchdog: ChildProcess | undefined
  dead: boolean
  stopping?: Promise<void>
}

const live = new Set<Instance>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const inst of live) {
      killQuietly(inst.child, 'SIGKILL')
      killQuietly(inst.watchdog, 'SIGKILL')
      rmSync(inst.dir, { recursive: true, force: true })
    }
  })
}

function killQuietly(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(child.pid, signal)
  } catch {
    // already gone
  }
}

class PortInUseError extends Error {}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port)
        else reject(new Error(`unexpected server address: ${String(address)}`))
      })
    })
  })
}

/** The command-line arguments that make a redis-server speak TLS only, on `port`. */
function tlsArgs(port: number, tls: RedisTls): string[] {
  return [
    '--port',
    '0',
    '--tls-port',
    String(port),
    '--tls-cert-file',
    tls.certFile,
    '--tls-key-file',
    tls.keyFile,
    '--tls-ca-cert-file',
    tls.caFile,
    '--tls-auth-clients',
    tls.authClients ?? 'no',
    '--tls-replication',
    'yes',
    '--tls-cluster',
    'yes',
  ]
}

/**
 * What the harness's own TLS connections to a server started with `tls` use. They do not reject the
 * server's certificate (a test may start one with an expired certificate on purpose): the readiness
 * probe knows its server by process id, not by certificate.
 */
export function tlsClientOptions(tls: RedisTls): ConnectionOptions {
  return {
    ca: readFileSync(tls.caFile, 'utf8'),
    rejectUnauthorized: false,
    ...(tls.clientCert ? { cert: readFileSync(tls.clientCert.certFile, 'utf8'), key: readFileSync(tls.clientCert.keyFile, 'utf8') } : {}),
  }
}

async function launch(
  port: number,
  env: Record<string, string> | undefined,
  extraArgs: readonly string[] = [],
  tlsSettings?: RedisTls,
): Promise<Instance> {
  installExitHook()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-redis-'))
  // No shell is involved, so `--save ''` (no RDB snapshots) is a genuinely empty argv entry.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--loglevel',
    'warning',
    '--dir',
    dir,
    ...(tlsSettings ? tlsArgs(port, tlsSettings) : []),
    ...extraArgs,
  ]
  const child = spawn(REDIS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env && { ...process.env, ...env } })
  let output = ''
  const collect = (chunk: Buffer | string): void => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT)
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)

  const watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid, dir)
  let markDead = (): void => {}
  const exited = new Promise<void>((resolve) => {
    markDead = resolve
  })
  const inst: Instance = { child, dir, exited, watchdog, output: () => output, dead: false }
  const onGone = (): void => {
    if (inst.dead) return
    inst.dead = true
    live.delete(inst)
    killQuietly(watchdog, 'SIGKILL')
    void rm(dir, { recursive: true, force: true }).catch(() => {})
    markDead()
  }
  child.once('exit', onGone)
  child.once('error', (err) => {
    collect(`\n${err.message}\n`)
    onGone()
  })
  live.add(inst)

  try {
    await waitReady(port, inst, tlsSettings && tlsClientOptions(tlsSettings))
  } catch (err) {
    await killInstance(inst)
    throw err
  }

  // Let the test process exit even if a test forgets to stop the server; the exit hook kills it.
  child.unref()
  unrefStream(child.stdout)
  unrefStream(child.stderr)
  return inst
}

async function killInstance(inst: Instance): Promise<void> {
  if (inst.dead) return
  inst.child.ref() // keep the event loop alive until the exit is observed
  killQuietly(inst.child, 'SIGCONT')
  killQuietly(inst.child, 'SIGKILL')
  await inst.exited
}

function stopInstance(inst: Instance): Promise<void> {
  if (inst.dead) return Promise.resolve()
  inst.stopping ??= (async () => {
    inst.child.ref()
    // A SIGSTOPped process would sit on SIGTERM until continued.
    killQuietly(inst.child, 'SIGCONT')
    killQuietly(inst.child, 'SIGTERM')
    const timer = setTimeout(() => killQuietly(inst.child, 'SIGKILL'), STOP_TIMEOUT_MS)
    await inst.exited
    clearTimeout(timer)
  })()
  return inst.stopping
}

/**
 * `read` returns when stdin hits EOF, i.e. when this process is gone and the
 * kernel closed our end of the pipe, however it died. The redis-server must
 * not inherit that pipe: libuv opens it close-on-exec.
 */
function startWatchdog(pid: number, dir: string): ChildProcess {
  const script = 'read _; kill -9 "$1" 2>/dev/null; rm -rf "$2"'
  const watchdog = spawn('sh', ['-c', script, 'redis-watchdog', String(pid), dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  watchdog.on('error', () => {}) // best effort: the exit hook still covers normal exits
  watchdog.unref()
  unrefStream(watchdog.stdin)
  return watchdog
}

function unrefStream(stream: unknown): void {
  ;(stream as { unref?: () => void } | null)?.unref?.()
}

/**
 * Polls with INFO rather than PING so that a different redis-server that
 * already owns the port is not mistaken for ours.
 */
async function waitReady(port: number, inst: Instance, tlsOptions: ConnectionOptions | undefined): Promise<void> {
  const pid = inst.child.pid
  const deadline = Date.now() + READY_TIMEOUT_MS
  let lastError: string
  while (!inst.dead) {
    try {
      const info = await probe(port, 500, tlsOptions)
      if (pid !== undefined && new RegExp(`^process_id:${pid}\\r?$`, 'm').test(info) && /^loading:0\r?$/m.test(info)) {
        return
      }
      lastError = 'port answered, but not (yet) by our ready redis-server'
    } catch (err) {
      lastError = (err as Error).message
    }
    if (Date.now() > deadline) {
      throw new Error(
        `redis-server on port ${port} did not become ready within ${READY_TIMEOUT_MS} ms ` + `(${lastError}). Output:\n${inst.output()}`,
      )
    }
    await Promise.race([sleep(25), inst.exited])
  }
  const out = inst.output()
  const { exitCode, signalCode } = inst.child
  const message = `redis-server on port ${port} exited before becoming ready (code ${exitCode}, signal ${signalCode}). Output:\n${out}`
  if (/address already in use|EADDRINUSE/i.test(out)) throw new PortInUseError(message)
  throw new Error(message)
}

/** One INFO round trip over a raw socket (TLS with `tlsOptions`); resolves with the bulk reply. */
function probe(port: number, timeoutMs: number, tlsOptions: ConnectionOptions | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsOptions ? tlsConnect({ host: '127.0.0.1', port, ...tlsOptions }) : net.createConnection({ host: '127.0.0.1', port })
    let buffer = ''
    let settled = false
    const finish = (err: Error | undefined, value?: string): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (err) reject(err)
      else resolve(value ?? '')
    }
    const timer = setTimeout(() => finish(new Error('probe timed out')), timeoutMs)
    socket.setEncoding('utf8')
    socket.on(tlsOptions ? 'secureConnect' : 'connect', () => socket.write('INFO server persistence\r\n'))
    socket.on('data', (chunk: string) => {
      buffer += chunk
      if (buffer.startsWith('-')) {
        if (buffer.includes('\r\n')) finish(new Error(buffer.trim()))
        return
      }
      const header = /^\$(\d+)\r\n/.exec(buffer)
      if (header?.[1] && Buffer.byteLength(buffer) >= header[0].length + Number(header[1]) + 2) {
        finish(undefined, buffer.slice(header[0].length))
      }
    })
    socket.on('error', (err) => finish(err))
    socket.on('close', () => finish(new Error('connection closed')))
  })
}

// Atomic snapshot: time is frozen while a script runs, so nothing expires midway.
const SNAPSHOT_SCRIPT = `
local out = {}
for _, k in ipairs(redis.call('KEYS', '*')) do
  local t = redis.call('TYPE', k)['ok']
  local v = {}
  if t == 'string' then v = { redis.call('GET', k) }
  elseif t == 'hash' then v = redis.call('HGETALL', k)
  elseif t == 'zset' then v = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
  elseif t == 'set' then v = redis.call('SMEMBERS', k)
  elseif t == 'list' then v = redis.call('LRANGE', k, 0, -1)
  end
  out[#out + 1] = { k, t, redis.call('PTTL', k), v }
end
return out
`

type SnapshotRow = [string, string, number, string[]]

function canonical(type: string, pttl: number, raw: string[]): string {
  let value: unknown = raw
  if (type === 'string') value = raw[0]
  else if (type === 'set') value = [...raw].sort()
  else if (type === 'hash') {
    const pairs: [string, string][] = []
    for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string])
    value = pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }
  return `${type}|${pttl > 0 ? 'ttl' : 'persist'}|${JSON.stringify(value)}`
}

class RedisServer implements RedisProcess {
  readonly url: string
  readonly address: string
  #inst: Instance

  constructor(
    readonly port: number,
    inst: Instance,
    private readonly env: Record<string, string> | undefined,
    private readonly args: readonly string[] = [],
    readonly tls: RedisTls | undefined = undefined,
  ) {
    this.url = `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`
    this.address = `127.0.0.1:${port}`
    this.#inst = inst
  }

  get alive(): boolean {
    return !this.#inst.dead
  }

  kill(): Promise<void> {
    return killInstance(this.#inst)
  }

  stop(): Promise<void> {
    return stopInstance(this.#inst)
  }

  async restart(): Promise<void> {
    await killInstance(this.#inst)
    // The port was ours a moment ago, so "in use" means another process took it: no point retrying.
    this.#inst = await launch(this.port, this.env, this.args, this.tls)
  }

  pause(): void {
    if (!this.#inst.dead) this.#inst.child.kill('SIGSTOP')
  }

  resume(): void {
    if (!this.#inst.dead) this.#inst.child.kill('SIGCONT')
  }

  client(options: RedisOptions = {}): Redis {
    return new Redis({
      host: '127.0.0.1',
      port: this.port,
      lazyConnect: false,
      ...(this.tls ? { tls: tlsClientOptions(this.tls) } : {}),
      ...options,
    })
  }

  async keys(): Promise<Record<string, string>> {
    const redis = this.client({ retryStrategy: () => null, maxRetriesPerRequest: 0, commandTimeout: 5_000 })
    redis.on('error', () => {}) // the failed command rejects with the same error
    try {
      const rows = (await redis.eval(SNAPSHOT_SCRIPT, 0)) as SnapshotRow[]
      rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      const snapshot: Record<string, string> = {}
      for (const [key, type, pttl, raw] of rows) snapshot[key] = canonical(type, pttl, raw)
      return snapshot
    } finally {
      redis.disconnect()
    }
  }
}

/**
 * `env` (e.g. a clock shim's) is added to the server's environment, on launch and on every restart();
 * `args` to its command line (e.g. `--cluster-enabled yes`); `tls`: TLS only, on the same port.
 */
export async function startRedis(
  opts: { port?: number; t?: Teardown; env?: Record<string, string>; args?: readonly string[]; tls?: RedisTls } = {},
): Promise<RedisProcess> {
  const attempts = opts.port === undefined ? PORT_ATTEMPTS : 1
  let lastError: unknown
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = opts.port ?? (await freePort())
    try {
      const server = new RedisServer(port, await launch(port, opts.env, opts.args, opts.tls), opts.env, opts.args, opts.tls)
      opts.t?.teardown(() => server.stop())
      return server
    } catch (err) {
      lastError = err
      if (!(err instanceof PortInUseError)) break
    }
  }
  throw lastError
}

type ClusterEnv = Record<string, string> | ((index: number) => Record<string, string> | undefined)

/** n independent masters (not Redis Cluster mode), started in parallel. `env`: for all, or per index. */
export async function startRedisCluster(
  n: number,
  opts: { t?: Teardown; env?: ClusterEnv; args?: readonly string[]; tls?: RedisTls } = {},
): Promise<RedisProcess[]> {
  const envOf = (i: number) => (typeof opts.env === 'function' ? opts.env(i) : opts.env)
  const results = await Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      startRedis({ t: opts.t, env: envOf(i), ...(opts.args ? { args: opts.args } : {}), ...(opts.tls ? { tls: opts.tls } : {}) }),
    ),
  )
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failure) {
    await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)))
    throw failure.reason
  }
  return results.map((r) => (r as PromiseFulfilledResult<RedisProcess>).value)
}

/** Stops every server this process started (that is still running). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map(stopInstance))
}
