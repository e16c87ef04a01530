/**
 * lockctl as a real process (src/cli/lockctl.ts bundled by esbuild, run by node), for end-to-end tests, and a
 * TCP proxy that can be cut to make the service unreachable mid-run.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildSync } from 'esbuild'

const root = new URL('../../', import.meta.url).pathname
let bundled: string | undefined

/**
 * lockctl compiled once per test process, as tsx would compile it (esbuild, the tsconfig's paths): each spawn then
 * costs ~0.1 s of CPU instead of ~0.4 s for tsx's loader. Two directories below the root, like src/cli/lockctl.ts,
 * so that its `../../package.json` and its packages resolve the same.
 */
export function lockctlBundle(): string {
  if (bundled) return bundled
  const dir = `${root}.tap/lockctl-${process.pid}`
  mkdirSync(dir, { recursive: true })
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const outfile = `${dir}/lockctl.mjs`
  buildSync({
    entryPoints: [`${root}src/cli/lockctl.ts`],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: `${root}tsconfig.json`,
    logLevel: 'warning',
  })
  return (bundled = outfile)
}

const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

export interface LockctlResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** ms from spawn to exit */
  elapsedMs: number
}

export interface LockctlProcess {
  readonly child: ChildProcess
  readonly done: Promise<LockctlResult>
  stderr(): string
  stdout(): string
}

export interface LockctlOptions {
  /** LOCK_SERVICE_URL (omitted: not set at all) */
  url?: string
  /** extra environment (LOCK_SERVICE_KEY, variables CMD reads, ...) */
  env?: Record<string, string>
  cwd?: string
  /** SIGKILL after this long (a safety net against hangs; default 25 s) */
  killAfterMs?: number
}

export function spawnLockctl(args: readonly string[], options: LockctlOptions = {}): LockctlProcess {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOCK_SERVICE_URL: options.url,
    LOCK_SERVICE_KEY: undefined,
    ...options.env,
  }
  // Not tap's coverage hooks: they make every lockctl start several times slower.
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === 'NODE_OPTIONS' || name === 'NODE_V8_COVERAGE' || name.startsWith('_TAPJS_')) delete env[name]
  }
  const started = Date.now()
  const child = spawn(process.execPath, [lockctlBundle(), ...args], { env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  live.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
  const watchdog = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 25_000)
  const done = new Promise<LockctlResult>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code, signal) => {
      clearTimeout(watchdog)
      live.delete(child)
      resolve({ code, signal, stdout, stderr, elapsedMs: Date.now() - started })
    })
  })
  return { child, done, stderr: () => stderr, stdout: () => stdout }
}

export function lockctl(args: readonly string[], options: LockctlOptions = {}): Promise<LockctlResult> {
  return spawnLockctl(args, options).done
}

/** Polls until `check` is truthy (or throws after `timeoutMs`). */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** The file's contents once it exists and is non-empty. */
export function fileText(file: string): string | undefined {
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, 'utf8')
  return text === '' ? undefined : text
}

/** Is the process running? (A zombie, dead but not yet reaped by its new parent, counts as gone.) */
export function processAlive(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

export interface Proxy {
  readonly url: string
  /** Drop every connection and refuse new ones from now on. */
  cut(): void
  close(): Promise<void>
}

/** A TCP proxy to `target` ("host:port"); `cut()` makes the service unreachable through it. */
export async function startProxy(target: string): Promise<Proxy> {
  const [host, port] = target.split(':') as [string, string]
  const sockets = new Set<net.Socket>()
  let cut = false
  const server = net.createServer((client) => {
    if (cut) return client.destroy()
    const upstream = net.connect(Number(port), host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('error', () => {})
      s.on('close', () => sockets.delete(s))
    }
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as net.AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut() {
      cut = true
      for (const s of sockets) s.destroy()
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
