/**
 * Which load generator costs the least client CPU? Runs the uncontended acquire + release flow
 * against the baseline server with each generator (interleaved, repeated) and reports the requests/s
 * it drove and the CPU it burnt per request. On a 2-core machine every client cycle is taken from
 * the server under test, so the cheapest client measures the servers most faithfully.
 *
 *   node --import tsx bench/loadgen-compare.ts [--reps 3] [--duration 3]
 *
 * autocannon is not a dependency; to include it: `npm i --no-save autocannon` (or point AUTOCANNON at
 * an installed copy's entry file, e.g. AUTOCANNON=/tmp/ac/node_modules/autocannon/autocannon.js).
 */
import { parseArgs } from 'node:util'
import { BenchContext } from './lib/context.js'
import { acquireRelease, randomToken } from './lib/flows.js'
import { runLoad } from './lib/load.js'
import { installCleanup, machineCpuMs, stopAll, type HttpServer } from './lib/processes.js'
import { fmtMs, fmtNumber, median } from './lib/stats.js'

interface Figures {
  requestsPerSec: number
  loaderUsPerRequest: number
  serverUsPerRequest: number
  p50: number
  p99: number
  /** Cores busy in other processes meanwhile (noise). */
  otherCores: number
}

type Autocannon = (options: Record<string, unknown>) => Promise<{
  requests: { total: number }
  latency: { p50: number; p99: number }
  duration: number
  non2xx: number
  errors: number
}>

const log = (line: string) => process.stderr.write(`${line}\n`)

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { reps: { type: 'string', default: '3' }, duration: { type: 'string', default: '3' } } })
  const reps = Number(values.reps)
  const durationMs = Number(values.duration) * 1000
  installCleanup(log)
  const ctx = new BenchContext({ warmupMs: 1000, durationMs, reps, client: 'raw' }, log)
  const server = await ctx.baseline()

  let autocannon: Autocannon | undefined
  try {
    const mod = (await import(process.env.AUTOCANNON ?? 'autocannon')) as { default: Autocannon }
    autocannon = mod.default
  } catch {
    log('autocannon is not installed: comparing raw and node-http only (npm i --no-save autocannon to include it)')
  }

  const generators: Record<string, (connections: number) => Promise<Figures>> = {
    raw: (connections) => viaRunner(server, 'raw', connections, durationMs),
    'node-http': (connections) => viaRunner(server, 'node-http', connections, durationMs),
    ...(autocannon
      ? { autocannon: (connections: number) => viaAutocannon(autocannon as Autocannon, server, connections, durationMs) }
      : {}),
  }
  const names = Object.keys(generators)
  const rows: string[][] = []
  for (const connections of [16, 64]) {
    const runs = new Map<string, Figures[]>(names.map((n) => [n, []]))
    for (let rep = 0; rep < reps; rep++) {
      for (const name of rep % 2 === 0 ? names : [...names].reverse()) {
        const f = await (generators[name] as (c: number) => Promise<Figures>)(connections)
        log(
          `  ${name.padEnd(10)} c=${connections}  ${f.requestsPerSec.toFixed(0)} req/s  client ${f.loaderUsPerRequest.toFixed(1)} µs/req  server ${f.serverUsPerRequest.toFixed(1)} µs/req`,
        )
        runs.get(name)?.push(f)
      }
    }
    for (const name of names) {
      const m = (pick: (f: Figures) => number) => median((runs.get(name) ?? []).map(pick))
      rows.push([
        name,
        String(connections),
        fmtNumber(m((f) => f.requestsPerSec)),
        fmtNumber(m((f) => f.loaderUsPerRequest)),
        fmtNumber(m((f) => f.serverUsPerRequest)),
        fmtMs(m((f) => f.p50)),
        fmtMs(m((f) => f.p99)),
        m((f) => f.otherCores).toFixed(2),
      ])
    }
  }
  await stopAll()
  process.stdout.write(
    `\n| generator | conns | baseline req/s | client CPU µs/req | server CPU µs/req | p50 ms | p99 ms | other cores |\n|---|---:|---:|---:|---:|---:|---:|---:|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`,
  )
}

async function viaRunner(server: HttpServer, client: 'raw' | 'node-http', connections: number, durationMs: number): Promise<Figures> {
  const r = await runLoad({ server, connections, warmupMs: 1000, durationMs, client, flow: acquireRelease })
  return {
    requestsPerSec: r.requestsPerSec,
    loaderUsPerRequest: r.cpu.loaderUsPerRequest,
    serverUsPerRequest: r.cpu.serverUsPerRequest,
    p50: r.latencyMs.p50,
    p99: r.latencyMs.p99,
    otherCores: r.cpu.otherCores,
  }
}

let acRun = 0

async function viaAutocannon(autocannon: Autocannon, server: HttpServer, connections: number, durationMs: number): Promise<Figures> {
  const run = `ac${acRun++}`
  let n = 0
  const options = (seconds: number) => ({
    url: `http://${server.host}:${server.port}`,
    connections,
    duration: seconds,
    headers: { 'lock-token': randomToken() },
    requests: [
      {
        method: 'POST',
        setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => {
          context.key = `u.${run}.${n++}`
          return { ...req, path: `/locks/${String(context.key)}` }
        },
      },
      {
        method: 'DELETE',
        setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => ({
          ...req,
          path: `/locks/${String(context.key)}`,
        }),
      },
    ],
  })
  await autocannon(options(1)) // warm-up
  const cpu0 = process.cpuUsage()
  const server0 = server.proc.cpuMs()
  const machine0 = machineCpuMs().machineBusy
  const started = performance.now()
  const result = await autocannon(options(durationMs / 1000))
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  const serverMs = server.proc.cpuMs() - server0
  const loaderMs = (cpu.user + cpu.system) / 1000
  const otherMs = machineCpuMs().machineBusy - machine0 - serverMs - loaderMs
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon: ${result.non2xx} non-2xx, ${result.errors} errors`)
  const total = result.requests.total
  return {
    requestsPerSec: total / seconds,
    loaderUsPerRequest: (cpu.user + cpu.system) / total,
    serverUsPerRequest: (serverMs * 1000) / total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    otherCores: Math.max(0, otherMs / 1000 / seconds),
  }
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    log(`loadgen-compare failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    await stopAll().catch(() => {})
    process.exit(1)
  },
)
