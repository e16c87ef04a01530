/**
 * `npm run soak`: the service under a steady mixed load for a long time, watched for leaks. Per
 * topology (one redis-server, a quorum of three; both at once by default) it starts Redis and one
 * service process, drives the load (soak/load.ts) at a fixed rate, samples the service and Redis
 * every few seconds (soak/sampler.ts), then judges: memory and keys must not keep growing after
 * warm-up, event-loop delay and error rate stay within bounds, and the history of holds has no
 * violation. Writes report.json, report.md and an SVG per topology into --out. Exits 1 when a check
 * failed, 2 on a usage error, 3 when the run itself failed.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { History } from '../harness/history.js'
import { startRedisCluster, type Teardown } from '../harness/redis-server.js'
import { startService } from '../harness/service-process.js'
import { serviceNodeFlags } from '../harness/start-command.js'
import { Load } from './load.js'
import { parseOptions, USAGE, UsageError, type Options } from './options.js'
import { renderSvg, runPanels, runTitle } from './plot.js'
import { judgeRun, runMarkdown, type RunReport } from './report.js'
import { Sampler } from './sampler.js'

const START_SLACK_MS = 120_000

class Cleanup implements Teardown {
  readonly #fns: (() => unknown)[] = []
  teardown(fn: () => unknown): void {
    this.#fns.push(fn)
  }
  async run(): Promise<void> {
    for (const fn of this.#fns.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined)
  }
}

const labelOf = (nodes: number) => (nodes === 1 ? '1 node' : `${nodes} nodes (quorum)`)
const log = (line: string) => process.stdout.write(`soak: ${line}\n`)

async function soakOne(options: Options, nodes: 1 | 3): Promise<RunReport> {
  const cleanup = new Cleanup()
  try {
    const redis = await startRedisCluster(nodes, { t: cleanup })
    const service = await startService(
      {
        REDIS_URLS: redis.map((r) => r.url).join(','),
        FENCE_RETENTION_MS: String(options.fenceRetentionMs),
        LOG_LEVEL: 'warn',
        // The production start script's node flags (package.json `start`).
        NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...serviceNodeFlags()].join(' ').trim(),
      },
      { t: cleanup },
    )
    log(`${labelOf(nodes)}: service pid ${service.pid} at ${service.url}, redis on ${redis.map((r) => r.port).join(', ')}`)
    const history = new History()
    const startedAt = performance.now()
    const load = new Load({
      url: service.url,
      seed: options.seed,
      rate: options.rate,
      durationMs: options.durationMs,
      hotKeys: options.hotKeys,
      history,
      startedAt,
      prefix: `soak${nodes}-`,
    })
    const sampler = new Sampler({ url: service.url, redis, load, startedAt, everyMs: options.sampleMs, durationMs: options.durationMs })
    const sampling = sampler.run()
    const progress = setInterval(
      () => {
        const s = sampler.samples.at(-1)
        if (!s) return
        log(
          `${labelOf(nodes)} ${s.t.toFixed(0)} s: ${s.requestsPerSecond.toFixed(0)} req/s, ${load.totals.errors} errors, ` +
            `RSS ${(s.rssBytes / 2 ** 20).toFixed(1)} MiB, heap ${(s.heapUsedBytes / 2 ** 20).toFixed(1)} MiB, ` +
            `loop p99 ${s.eventLoopP99Ms.toFixed(1)} ms, redis keys ${s.redisKeys.join('/')}`,
        )
      },
      Math.max(10_000, options.durationMs / 20),
    )
    try {
      await load.run()
    } finally {
      clearInterval(progress)
      sampler.stop()
      await sampling
    }
    const violations = history.check().map((v) => `[${v.kind}] ${v.message}`)
    const t = load.totals
    return judgeRun(
      {
        label: labelOf(nodes),
        nodes,
        durationS: options.durationMs / 1000,
        rate: options.rate,
        requests: t.requests,
        errors: t.errors,
        errorSamples: t.errorSamples,
        statuses: t.statuses,
        holds: history.size,
        violations,
        freshKeys: t.freshKeys,
      },
      sampler.samples,
      options.bounds,
    )
  } finally {
    await cleanup.run()
  }
}

async function writeReport(options: Options, runs: readonly RunReport[]): Promise<string> {
  await mkdir(options.out, { recursive: true })
  const sections: string[] = []
  for (const r of runs) {
    const svg = `soak-${r.nodes}-node${r.nodes === 1 ? '' : 's'}.svg`
    await writeFile(path.join(options.out, svg), renderSvg(runTitle(r), runPanels(r, options.bounds.eventLoopP99Ms)))
    sections.push(runMarkdown(r, svg))
  }
  const head = [
    `# Soak report`,
    '',
    `${runs.every((r) => r.passed) ? 'Passed' : 'FAILED'}: ${(options.durationMs / 1000).toFixed(0)} s, ${options.rate} operations/s per topology, ` +
      `seed ${options.seed}, sampled every ${options.sampleMs / 1000} s, FENCE_RETENTION_MS ${options.fenceRetentionMs}. ` +
      `Growth judged after ${options.bounds.warmupShare * 100}% of the run.`,
    '',
  ]
  await writeFile(path.join(options.out, 'report.md'), [...head, ...sections].join('\n'))
  await writeFile(path.join(options.out, 'report.json'), `${JSON.stringify({ options, runs }, null, 2)}\n`)
  return options.out
}

async function main(): Promise<number> {
  let options: Options
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError)) throw err
    if (!err.message) {
      process.stdout.write(USAGE)
      return 0
    }
    process.stderr.write(`soak: ${err.message}\n${USAGE}`)
    return 2
  }
  setTimeout(() => {
    process.stderr.write(`soak: still running ${START_SLACK_MS / 1000} s past --duration: giving up\n`)
    process.exit(3)
  }, options.durationMs + START_SLACK_MS).unref()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
  log(`${(options.durationMs / 1000).toFixed(0)} s at ${options.rate} operations/s on ${options.nodes.map(labelOf).join(' and ')}`)
  let runs: RunReport[]
  try {
    runs = await Promise.all(options.nodes.map((n) => soakOne(options, n)))
  } catch (err) {
    process.stderr.write(`soak: the run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    return 3
  }
  const out = await writeReport(options, runs)
  for (const r of runs) {
    log(
      `${r.label}: ${r.passed ? 'passed' : 'FAILED'}; ${r.requests} requests, ${r.errors} errors, ${r.holds} holds, ` +
        `RSS slope ${((r.growth.rss.slopePerSecond * 60) / 1024).toFixed(1)} KiB/min, heap slope ${((r.growth.heap.slopePerSecond * 60) / 1024).toFixed(1)} KiB/min, ` +
        `loop p99 worst ${r.eventLoop.worst.toFixed(1)} ms`,
    )
    for (const f of r.failures) log(`  ${r.label}: ${f}`)
  }
  log(`report: ${path.join(out, 'report.md')} (and report.json, the SVGs)`)
  return runs.every((r) => r.passed) ? 0 : 1
}

process.exitCode = await main()
process.exit(process.exitCode)
