/**
 * `npm run bench` (after scripts/bench.sh built the service): starts redis-server(s), the service
 * (`node dist/server.js`) and the baseline (bench/baseline-server.js) as separate processes on free
 * loopback ports, runs every scenario in bench/scenarios/ (file-name order), stops everything,
 * prints markdown tables and writes bench/results/latest.json (figures) and latest.md (the tables).
 *
 *   npm run bench -- --only uncontended,quorum   run some scenarios (ids)
 *   npm run bench -- --reps 5 --duration 5       more / longer repetitions (seconds)
 *   npm run bench -- --client node-http          load with node:http instead of the raw client
 *   npm run bench -- --profile                   --cpu-prof on every server → $TMPDIR/lock-service-bench-profiles/
 *   npm run bench -- --profile --profile-dir D   … → D
 *   npm run bench -- --out bench/results/x.json  write the figures (and x.md) elsewhere
 *   npm run bench -- --list                      list the scenarios
 *   npm run bench -- --coalesce auto             the service batching writes with ioredis' enableAutoPipelining
 *                                                (ours: WriteCoalescer, the default; none: no batching)
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { coalescings, type Coalescing } from '../src/redis/coalesce.js'
import { BenchContext, NOISY_CORES, type Settings } from './lib/context.js'
import { clientKinds, connect, type ClientKind } from './lib/http-client.js'
import { installCleanup, repoRoot, stopAll, type HttpServer } from './lib/processes.js'
import type { Scenario, ScenarioReport } from './lib/scenario.js'
import { median, round } from './lib/stats.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      reps: { type: 'string', default: '3' },
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      client: { type: 'string', default: 'raw' },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string', default: path.join(os.tmpdir(), 'lock-service-bench-profiles') },
      out: { type: 'string', default: 'bench/results/latest.json' },
      list: { type: 'boolean', default: false },
      coalesce: { type: 'string' },
    },
  })
  const client = values.client as ClientKind
  if (!clientKinds.includes(client)) throw new Error(`--client must be one of ${clientKinds.join(', ')}`)
  const coalesce = values.coalesce as Coalescing | undefined
  if (coalesce !== undefined && !coalescings.includes(coalesce)) throw new Error(`--coalesce must be one of ${coalescings.join(', ')}`)
  const settings: Settings = {
    reps: positive('reps', values.reps),
    durationMs: positive('duration', values.duration) * 1000,
    warmupMs: positive('warmup', values.warmup, true) * 1000,
    client,
    ...(values.profile ? { profileDir: path.resolve(values['profile-dir']) } : {}),
    ...(coalesce ? { coalesce } : {}),
  }

  const all = await loadScenarios()
  if (values.list) {
    for (const s of all) log(`${s.id.padEnd(14)} ${s.title}`)
    return 0
  }
  const wanted = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = wanted?.filter((id) => !all.some((s) => s.id === id)) ?? []
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')} (known: ${all.map((s) => s.id).join(', ')})`)
  const scenarios = wanted ? all.filter((s) => wanted.includes(s.id)) : all

  installCleanup(log)
  if (settings.profileDir) mkdirSync(path.resolve(repoRoot, settings.profileDir), { recursive: true })
  const ctx = new BenchContext(settings, log)
  const startedAt = new Date()
  const loadAverageAtStart = os.loadavg()
  const began = performance.now()

  log(
    `lock-service bench: ${scenarios.map((s) => s.id).join(', ')} — ${settings.reps} × (${settings.warmupMs / 1000} s warm-up + ${settings.durationMs / 1000} s), client ${client}` +
      `, on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}` +
      (coalesce ? `, writes batched by ${coalesce}` : ''),
  )
  await checkShapes(await ctx.baseline(), await ctx.service({ nodes: 1 }))
  const redisVersion = (await ctx.redisNodes(1))[0]!.version

  const reports: { scenario: Scenario; report: ScenarioReport; seconds: number }[] = []
  for (const scenario of scenarios) {
    log(`\n▶ ${scenario.id}: ${scenario.title}`)
    const t0 = performance.now()
    const report = await scenario.run(ctx)
    reports.push({ scenario, report, seconds: (performance.now() - t0) / 1000 })
  }
  await stopAll()
  const seconds = (performance.now() - began) / 1000

  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis: redisVersion,
    loadAverageAtStart: loadAverageAtStart.map((l) => Math.round(l * 100) / 100),
  }
  const noise = {
    runs: ctx.results.length,
    otherCoresMedian: round(median(ctx.results.map((r) => r.cpu.otherCores))),
    otherCoresMax: round(Math.max(...ctx.results.map((r) => r.cpu.otherCores))),
    noisyRuns: ctx.results.filter((r) => r.cpu.otherCores > NOISY_CORES).length,
    stealCoresMedian: round(median(ctx.results.map((r) => r.cpu.stealCores))),
  }
  const markdown = renderMarkdown(reports, machine, noise, settings, startedAt)
  process.stdout.write(`\n${markdown}\n`)

  const commit = gitCommit()
  const out = path.resolve(repoRoot, values.out)
  mkdirSync(path.dirname(out), { recursive: true })
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        date: startedAt.toISOString(),
        seconds: Math.round(seconds),
        commit,
        machine,
        noise,
        settings,
        targets: reports.flatMap((r) => r.report.targets ?? []),
        scenarios: Object.fromEntries(
          reports.map(({ scenario, report, seconds: s }) => [
            scenario.id,
            {
              title: scenario.title,
              description: scenario.description,
              seconds: Math.round(s),
              table: { columns: report.columns, rows: report.rows },
              notes: report.notes ?? [],
              figures: report.figures,
            },
          ]),
        ),
        markdown,
      },
      null,
      2,
    )}\n`,
  )
  const mdOut = `${out.replace(/\.json$/, '')}.md`
  const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')
  writeFileSync(
    mdOut,
    `# Benchmark run\n\n\`${command}\` at commit ${commit ?? 'unknown'}, ${Math.round(seconds)} s in all; ` +
      `the same run wrote the figures behind these tables, per repetition, to \`${path.basename(out)}\` (not committed).\n\n${markdown}\n`,
  )
  const shown = (file: string) => (path.relative(repoRoot, file).startsWith('..') ? file : path.relative(repoRoot, file))
  log(`\nwrote ${shown(out)} and ${shown(mdOut)} (${Math.round(seconds)} s in all)`)
  if (settings.profileDir) log(`CPU profiles: ${settings.profileDir}/*.cpuprofile (bench/profile-summary.ts summarises one)`)
  return 0
}

function positive(name: string, text: string | undefined, zeroOk = false): number {
  const n = Number(text)
  if (!Number.isFinite(n) || n < 0 || (!zeroOk && n === 0))
    throw new Error(`--${name} must be a ${zeroOk ? 'non-negative' : 'positive'} number`)
  return n
}

async function loadScenarios(): Promise<Scenario[]> {
  const dir = path.join(repoRoot, 'bench/scenarios')
  const files = readdirSync(dir)
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .sort()
  const scenarios: Scenario[] = []
  for (const file of files) {
    const mod = (await import(path.join(dir, file))) as { default?: Scenario }
    if (!mod.default?.id || typeof mod.default.run !== 'function') throw new Error(`bench/scenarios/${file} must default-export a Scenario`)
    scenarios.push(mod.default)
  }
  return scenarios
}

/** The baseline must answer the service's shapes (same JSON keys), or the ratios compare unlike things. */
async function checkShapes(baseline: HttpServer, service: HttpServer): Promise<void> {
  const keysOf = async (server: HttpServer, method: string, key: string) => {
    const conn = connect('raw', server.host, server.port)
    try {
      const res = await conn.request(method, `/locks/${key}`, { headers: { 'lock-token': 'bench-shape-check-token-0001' } })
      return `${res.status} ${Object.keys(JSON.parse(res.body.toString('utf8')) as object)
        .sort()
        .join(',')}`
    } finally {
      conn.close()
    }
  }
  const key = `shape.${Date.now().toString(36)}`
  for (const method of ['POST', 'DELETE']) {
    const [b, s] = [await keysOf(baseline, method, key), await keysOf(service, method, key)]
    if (b !== s) throw new Error(`the baseline no longer answers ${method} /locks/:key like the service: baseline "${b}", service "${s}"`)
  }
}

function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head}+dirty` : head
  } catch {
    return null
  }
}

function renderMarkdown(
  reports: readonly { scenario: Scenario; report: ScenarioReport }[],
  machine: { cpus: number; cpuModel: string; node: string; redis: string; loadAverageAtStart: number[] },
  noise: { runs: number; otherCoresMedian: number | null; otherCoresMax: number | null; noisyRuns: number },
  settings: Settings,
  date: Date,
): string {
  const lines: string[] = []
  lines.push(
    `Run of ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC — ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, Redis ${machine.redis}; ` +
      `load average at start ${machine.loadAverageAtStart.join(' / ')}. ` +
      `Each figure: median of ${settings.reps} runs of ${settings.durationMs / 1000} s after ${settings.warmupMs / 1000} s warm-up; ` +
      `× = median of the per-repetition ratios. ` +
      `Other processes during the ${noise.runs} measured runs: median ${noise.otherCoresMedian ?? '–'} cores, max ${noise.otherCoresMax ?? '–'}` +
      (noise.noisyRuns > 0 ? ` (**${noise.noisyRuns} runs above ${NOISY_CORES}: figures disturbed**).` : '.'),
  )
  for (const { scenario, report } of reports) {
    lines.push('', `## ${scenario.title}`, '', scenario.description, '')
    lines.push(table(report.columns, report.rows))
    for (const note of report.notes ?? []) lines.push('', note)
  }
  const targets = reports.flatMap((r) => r.report.targets ?? [])
  if (targets.length > 0) {
    lines.push('', '## Targets', '')
    lines.push(
      table(
        ['target', 'measured', 'goal', 'met'],
        targets.map((t) => [t.name, t.shown, t.goal, t.pass ? 'yes' : '**no**']),
      ),
    )
  }
  return lines.join('\n')
}

function table(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const numeric = columns.map((_, i) => i > 0 && rows.every((r) => /^[-–\d.,× %]+$/.test(r[i] ?? '')))
  const head = `| ${columns.join(' | ')} |`
  const rule = `|${columns.map((_, i) => (numeric[i] ? '---:' : '---')).join('|')}|`
  return [head, rule, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    await stopAll().catch(() => {})
    process.exit(1)
  },
)
