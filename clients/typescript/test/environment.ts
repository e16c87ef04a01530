/**
 * The conformance environment (clients/conformance/README.md): the JSON line of one already running in
 * LOCK_SERVICE_CONFORMANCE, else one started here (`node --import tsx clients/conformance/environment.ts`
 * from the repository root), stopped by closing its stdin. Also small helpers the suites share.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface Environment {
  service: string
  proxied: string
  control: string
  adminKey: string
  scopedKey: string
  scopedPrefix: string
  readOnlyKey: string
  maxWaiters: number
  /** The same service over HTTPS, requiring a client certificate (PEM files). */
  tls: { service: string; caFile: string; certFile: string; keyFile: string; otherCaFile: string }
}

const root = fileURLToPath(new URL('../../..', import.meta.url))

/** Starts (or finds) the environment; `stop` ends what was started here. */
export async function startEnvironment(): Promise<{ env: Environment; stop: () => Promise<void> }> {
  const given = process.env.LOCK_SERVICE_CONFORMANCE
  if (given) return { env: JSON.parse(given) as Environment, stop: async () => undefined }
  const env: Record<string, string | undefined> = { ...process.env }
  // Not tap's loaders and coverage: the environment is a plain tsx process.
  for (const name of Object.keys(env))
    if (name === 'NODE_OPTIONS' || name === 'NODE_V8_COVERAGE' || name.startsWith('_TAPJS_')) delete env[name]
  const child = spawn(process.execPath, ['--import', 'tsx', 'clients/conformance/environment.ts'], {
    cwd: root,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout })
    lines.once('line', resolve)
    child.once('exit', (code) => reject(new Error(`the conformance environment exited (${code}) before it was ready`)))
  })
  return {
    env: JSON.parse(line) as Environment,
    stop: async () => {
      child.stdin.end()
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(killer)
    },
  }
}

/** A prefix unique to this run, for keys. */
export const runId = `ts-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`

/** A request the environment's control API answers. */
export async function control(env: Environment, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(env.control + path, { method: 'POST' })
  const body = (await response.json()) as Record<string, unknown>
  if (!response.ok) throw new Error(`control ${path}: ${response.status} ${JSON.stringify(body)}`)
  return body
}

export interface Recorded {
  method: string
  path: string
  /** performance.now() when it was sent */
  at: number
  /** performance.now() when its answer's headers were in (or it failed) */
  answeredAt?: number
  status?: number
  error?: string
}

/** A fetch that records every request it sends (method, path, when, and the status or the failure). */
export function recordingFetch(): { fetch: typeof fetch; calls: Recorded[] } {
  const calls: Recorded[] = []
  const recording: typeof fetch = async (input, init) => {
    const url = new URL(String(input))
    const call: Recorded = { method: init?.method ?? 'GET', path: url.pathname, at: performance.now() }
    calls.push(call)
    try {
      const response = await fetch(input, init)
      call.status = response.status
      return response
    } catch (err) {
      call.error = err instanceof Error ? err.message : String(err)
      throw err
    } finally {
      call.answeredAt = performance.now()
    }
  }
  return { fetch: recording, calls }
}

/** When `signal` aborts (performance.now()), or undefined if not within `ms`. */
export function abortedWithin(signal: AbortSignal, ms: number): Promise<number | undefined> {
  if (signal.aborted) return Promise.resolve(performance.now())
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve(performance.now())
    })
  })
}
