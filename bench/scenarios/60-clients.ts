/**
 * The client libraries' overhead (issue #28, item 8): acquire + release cycles through each library
 * against raw HTTP from the same language, on one service. TypeScript runs here, in alternating rounds
 * (library, raw fetch, raw fetch, library, …) on the same keep-alive pool with the same token style (a
 * client-chosen 128-bit token in the JSON body); Python and Go run their own programs
 * (clients/python/bench/overhead.py, clients/go/cmd/overhead), each printing one JSON line, when they exist.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@lock-service/client'
import { repoRoot } from '../lib/processes.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtNumber, fmtRatio, median, round } from '../lib/stats.js'
import { target } from '../lib/summary.js'

const CONCURRENCY = 16
const TTL_MS = 10_000
/** The TypeScript library's cycles/s, as a share of raw fetch's: at least 0.9. */
const TARGET_TS_RATIO = 0.9

const run = promisify(execFile)

interface LanguageResult {
  language: string
  library: number
  raw: number
  ratio: number
}

type Cycle = (key: string) => Promise<void>

/** Cycles per second of `cycle` on CONCURRENCY workers, one key each, for `ms`. */
async function rate(cycle: Cycle, ms: number, round: string): Promise<number> {
  const ends = performance.now() + ms
  let cycles = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      const key = `bench-clients.${round}.${worker}`
      while (performance.now() < ends) {
        await cycle(key)
        cycles++
      }
    }),
  )
  return cycles / ((performance.now() - started) / 1000)
}

function rawCycle(url: string): Cycle {
  return async (key) => {
    const path = `${url}/locks/${encodeURIComponent(key)}`
    const token = randomBytes(16).toString('base64url')
    const acquired = await fetch(path, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ token, ttlMs: TTL_MS }),
    })
    const grant = JSON.parse(await acquired.text()) as { token: string }
    if (acquired.status !== 201) throw new Error(`raw acquire: ${acquired.status}`)
    const released = await fetch(path, { method: 'DELETE', headers: { accept: 'application/json', 'lock-token': grant.token } })
    JSON.parse(await released.text())
    if (released.status !== 200) throw new Error(`raw release: ${released.status}`)
  }
}

/** The same cycle over node:http with a keep-alive agent, written as a caller would by hand. */
function rawNodeHttpCycle(url: string): Cycle {
  const agent = new http.Agent({ keepAlive: true })
  const { hostname, port } = new URL(url)
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ hostname, port, method, path, headers, agent }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text }))
        res.once('error', reject)
      })
      req.once('error', reject)
      req.end(body)
    })
  return async (key) => {
    const path = `/locks/${encodeURIComponent(key)}`
    const token = randomBytes(16).toString('base64url')
    const acquired = await send(
      'POST',
      path,
      { accept: 'application/json', 'content-type': 'application/json' },
      JSON.stringify({ token, ttlMs: TTL_MS }),
    )
    const grant = JSON.parse(acquired.text) as { token: string }
    if (acquired.status !== 201) throw new Error(`raw node:http acquire: ${acquired.status}`)
    const released = await send('DELETE', path, { accept: 'application/json', 'lock-token': grant.token })
    JSON.parse(released.text)
    if (released.status !== 200) throw new Error(`raw node:http release: ${released.status}`)
  }
}

function libraryCycle(url: string): Cycle {
  const client = new Client({ url })
  return async (key) => {
    const grant = await client.locks.acquire(key, { ttlMs: TTL_MS })
    await client.locks.release(key, grant.token)
  }
}

/** The other languages' programs: one JSON line each, or why not. */
async function otherLanguages(url: string, seconds: number): Promise<{ results: LanguageResult[]; notes: string[] }> {
  const programs = [
    {
      language: 'python',
      present: existsSync(path.join(repoRoot, 'clients/python/bench/overhead.py')),
      file: 'python3',
      args: ['clients/python/bench/overhead.py', '--url', url, '--duration', String(seconds), '--concurrency', String(CONCURRENCY)],
      cwd: repoRoot,
      missing: 'clients/python/bench/overhead.py',
    },
    {
      language: 'go',
      present: existsSync(path.join(repoRoot, 'clients/go/cmd/overhead')),
      file: 'go',
      args: ['run', './cmd/overhead', '-url', url, '-duration', String(seconds), '-concurrency', String(CONCURRENCY)],
      cwd: path.join(repoRoot, 'clients/go'),
      missing: 'clients/go/cmd/overhead',
    },
  ]
  const results: LanguageResult[] = []
  const notes: string[] = []
  for (const p of programs) {
    if (!p.present) {
      notes.push(`${p.language}: skipped, ${p.missing} does not exist`)
      continue
    }
    try {
      const { stdout } = await run(p.file, p.args, { cwd: p.cwd, timeout: (seconds * 4 + 120) * 1000 })
      const line = stdout.trim().split('\n').at(-1) ?? ''
      results.push(JSON.parse(line) as LanguageResult)
    } catch (err) {
      notes.push(`${p.language}: ${p.file} ${p.args.join(' ')} failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`)
    }
  }
  return { results, notes }
}

const scenario: Scenario = {
  id: 'clients',
  title: 'Client libraries: acquire + release through each library vs raw HTTP',
  description:
    `${CONCURRENCY} workers, one key each, loop acquire (client-chosen token) + release through the library and through the ` +
    "language's raw HTTP (keep-alive), rotating rounds; × raw = library ÷ raw. TypeScript runs in the bench process " +
    '(library vs fetch, the target, and vs node:http); Python and Go run clients/*/ overhead programs when they exist.',
  async run(ctx) {
    const service = await ctx.service({ nodes: 1 })
    const url = `http://${service.host}:${service.port}`
    const cycles = { library: libraryCycle(url), raw: rawCycle(url), rawNodeHttp: rawNodeHttpCycle(url) }
    const kinds = Object.keys(cycles) as (keyof typeof cycles)[]
    for (const which of kinds) await rate(cycles[which], ctx.settings.warmupMs, `warm-${which}`)
    const runs: Record<keyof typeof cycles, number>[] = []
    for (let rep = 0; rep < ctx.settings.reps; rep++) {
      // Rotate which goes first, so a drift in the machine's load falls on all alike.
      const order = kinds.map((_, i) => kinds[(i + rep) % kinds.length]!)
      const result = { library: 0, raw: 0, rawNodeHttp: 0 }
      for (const which of order) result[which] = await rate(cycles[which], ctx.settings.durationMs, `${rep}-${which}`)
      runs.push(result)
    }
    const library = median(runs.map((r) => r.library))
    const ts: LanguageResult = {
      language: 'typescript',
      library,
      raw: median(runs.map((r) => r.raw)),
      ratio: median(runs.map((r) => r.library / r.raw)),
    }
    const tsNodeHttp: LanguageResult = {
      language: 'typescript (vs node:http)',
      library,
      raw: median(runs.map((r) => r.rawNodeHttp)),
      ratio: median(runs.map((r) => r.library / r.rawNodeHttp)),
    }
    const others = await otherLanguages(url, Math.max(1, Math.round(ctx.settings.durationMs / 1000)))
    const all = [ts, tsNodeHttp, ...others.results]
    const targets: TargetCheck[] = [
      target('TypeScript library cycles/s vs raw fetch', ts.ratio, fmtRatio(ts.ratio), '≥', TARGET_TS_RATIO, '×'),
    ]
    return {
      columns: ['language', 'library cycles/s', 'raw cycles/s', '× raw'],
      rows: all.map((r) => [r.language, fmtNumber(r.library), fmtNumber(r.raw), fmtRatio(r.ratio)]),
      figures: {
        concurrency: CONCURRENCY,
        languages: all.map((r) => ({ ...r, library: round(r.library), raw: round(r.raw), ratio: round(r.ratio) })),
        typescriptRuns: runs,
      },
      targets,
      notes: others.notes,
    }
  },
}

export default scenario
