import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort, type Teardown } from './redis-server.js'

export interface ServiceProcess {
  readonly url: string
  readonly pid: number
  readonly output: () => string
  /** Send a signal and wait for the process to exit; resolves to its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** SIGSTOP / SIGCONT: the process freezes (its sockets stay open, the kernel still queues bytes) and resumes. */
  pause(): void
  resume(): void
}

const serverEntry = new URL('../src/server.ts', import.meta.url).pathname
const OUTPUT_LIMIT = 65_536

/** Every service still running: killed when this process exits (one hook, however many restarts). */
const live = new Set<ChildProcess>()
let exitHookInstalled = false

function killOnExit(child: ChildProcess): void {
  live.add(child)
  child.once('exit', () => live.delete(child))
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL')
  })
}

/** The real service as a separate process (`node --import tsx src/server.ts`), ready when /readyz is 200. */
export async function startService(env: Record<string, string>, opts: { t?: Teardown } = {}): Promise<ServiceProcess> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', serverEntry], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const collect = (c: Buffer) => (output = (output + c.toString()).slice(-OUTPUT_LIMIT))
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      // A grandchild (tsx's esbuild) may hold the pipes open after a SIGKILL: stop reading them.
      child.stdout?.destroy()
      child.stderr?.destroy()
      resolve(code)
    }),
  )
  let exitCode: number | null | undefined
  void exited.then((code) => (exitCode = code))
  const url = `http://127.0.0.1:${port}`
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (exitCode === undefined) child.kill(signal)
    return exited
  }
  opts.t?.teardown(() => stop('SIGKILL'))
  killOnExit(child)

  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`service exited with ${exitCode}: ${output}`)
    try {
      const res = await fetch(`${url}/readyz`)
      if (res.status === 200) {
        const signal = (name: NodeJS.Signals) => () => void (exitCode === undefined && child.kill(name))
        return { url, pid: child.pid!, output: () => output, stop, pause: signal('SIGSTOP'), resume: signal('SIGCONT') }
      }
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  await stop('SIGKILL')
  throw new Error(`service did not become ready: ${output}`)
}

/** Two replicas of the service on the same Redis nodes (all of them, in this order); `env`: more settings (REDIS_MODE…). */
export function startReplicas(
  redisUrls: readonly string[],
  opts: { t?: Teardown; env?: Record<string, string> },
): Promise<[ServiceProcess, ServiceProcess]> {
  const env = { ...(redisUrls.length > 0 ? { REDIS_URLS: redisUrls.join(',') } : {}), ...opts.env }
  return Promise.all([startService(env, opts), startService(env, opts)])
}
