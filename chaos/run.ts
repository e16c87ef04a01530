/**
 * `npm run chaos`: a Jepsen-style safety test of the real service. Starts redis-servers (clock shim
 * preloaded) and service replicas (through one TCP proxy per replica and node), runs contending
 * clients while a seeded nemesis injects faults, heals everything, waits out the quarantine, checks,
 * and prints a report. Exits 1 on any violation, 2 on a usage error, 3 when the run itself failed.
 */
import { writeFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { History } from '../harness/history.js'
import { request } from '../harness/http.js'
import { probeGrantable, runWorkload } from './clients.js'
import { ClockWatch } from './clock-watch.js'
import { runFencedWriters } from './fenced-writers.js'
import { Cluster } from './cluster.js'
import { startElections } from './elections.js'
import { kindsNamed } from './kinds/index.js'
import { limitsFor, playSchedule, schedule, type FaultRecord } from './nemesis.js'
import { parseOptions, reproduceCommand, serviceSettings, USAGE, UsageError, type Options, type ServiceSettings } from './options.js'
import { buildReport, formatReport, type FinalChecks } from './report.js'
import { scenarios, type Scenario } from './scenarios.js'

/** Start-up, the settle wait and the checks after the workload must fit in this much beyond --duration. */
const OVERALL_SLACK_MS = 180_000
const POLL_MS = 200
const SETTLE_SLACK_MS = 1_000

function log(startedAt: number | undefined, line: string): void {
  const t = startedAt === undefined ? '' : `${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)}s `
  process.stdout.write(`${t}${line}\n`)
}

/** Whether a replica says every node votes again (no quarantine, no distrusted clock). Unknown fields count as fine. */
async function allNodesVote(url: string): Promise<boolean> {
  try {
    const res = await request(url, 'GET', '/readyz', { timeoutMs: 1_000 })
    const nodes = Array.isArray(res.body.nodes) ? (res.body.nodes as Record<string, unknown>[]) : []
    return (
      res.status === 200 &&
      nodes.every((n) => n.up === true && (n.vote ?? 'counts') === 'counts' && ((n.quarantineMs as number | undefined) ?? 0) === 0)
    )
  } catch {
    return false
  }
}

/**
 * After the last heal and the last hold: wait out MAX_TTL_MS + MAX_LOCK_DELAY_MS (the quarantine of a
 * restarted node, every hold's TTL and delay, a line's waiter leases), then until every replica counts
 * every node (bounded).
 */
async function settle(
  cluster: Cluster,
  faults: readonly FaultRecord[],
  settings: ServiceSettings,
  startedAt: number,
): Promise<number | null> {
  const lastHeal = Math.max(0, ...faults.map((f) => f.healDoneAt ?? f.healedAt ?? 0))
  const quiet = Math.max(startedAt + lastHeal, performance.now())
  const sitOutMs = settings.maxTtlMs + settings.maxLockDelayMs
  await sleep(Math.max(0, quiet + sitOutMs + SETTLE_SLACK_MS - performance.now()))
  const deadline = performance.now() + sitOutMs + 5_000
  while (performance.now() < deadline) {
    const urls = cluster.replicas.filter((r) => r.process).map((r) => r.url)
    if ((await Promise.all(urls.map(allNodesVote))).every(Boolean)) return performance.now() - startedAt
    await sleep(POLL_MS)
  }
  return null
}

async function replicasAlive(cluster: Cluster): Promise<FinalChecks['replicasAlive']> {
  const failures: string[] = []
  for (const r of cluster.replicas) {
    if (!r.process) {
      failures.push(`replica ${r.index} is not running (its restart failed)`)
      continue
    }
    const res = await request(r.url, 'GET', '/healthz', { timeoutMs: 2_000 }).catch((err: Error) => err)
    if (res instanceof Error || res.status !== 200)
      failures.push(`replica ${r.index}: /healthz ${res instanceof Error ? res.message : res.status}`)
  }
  return { ok: cluster.replicas.length - failures.length, failures }
}

/** lock_grants_answered_late_total summed over the replicas (each since its last start); null when no replica's /metrics could be read. */
async function grantsAnsweredLate(cluster: Cluster): Promise<number | null> {
  const counts = await Promise.all(
    cluster.replicas.map(async (r) => {
      try {
        const text = await (await fetch(`${r.url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text()
        return [...text.matchAll(/^lock_grants_answered_late_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0)
      } catch {
        return null
      }
    }),
  )
  return counts.every((c) => c === null) ? null : counts.reduce<number>((n, c) => n + (c ?? 0), 0)
}

async function run(options: Options): Promise<boolean> {
  const settings = serviceSettings(options.serviceEnv)
  const scenario = scenarios[options.scenario]
  const kinds = kindsNamed(options.kinds)
  const command = reproduceCommand(options)
  const plans = schedule({ ...options, scenario, settings })
  const wallStart = performance.now()
  log(undefined, `chaos: seed ${options.seed}, scenario ${options.scenario} (${scenario.description})`)
  log(undefined, `chaos: ${plans.length} faults scheduled; reproduce with: ${command}`)

  const cluster = await Cluster.start({
    nodes: options.nodes,
    replicas: options.replicas,
    serviceEnv: options.serviceEnv,
    backend: (scenario as Scenario).backend ?? 'standalone',
  })
  try {
    log(
      undefined,
      `chaos: ${cluster.redisCluster ? `a Redis Cluster of ${options.nodes} masters (${cluster.nodes.length} redis-servers)` : `${options.nodes} redis-server(s)`}, ${options.replicas} replica(s) up after ${((performance.now() - wallStart) / 1000).toFixed(1)} s`,
    )
    const history = new History()
    const startedAt = performance.now()
    const watch = new ClockWatch(cluster, startedAt)
    watch.start()
    const elections = kinds.some((k) => k.name === 'election')
      ? startElections({
          seed: options.seed,
          keysPerKind: options.keys,
          settings,
          replicaUrl: (r) => cluster.replicas[r]!.url,
          replicas: options.replicas,
          history,
          startedAt,
        })
      : undefined
    const [stats, faults, fenced] = await Promise.all([
      runWorkload({
        seed: options.seed,
        clients: options.clients,
        kinds,
        keysPerKind: options.keys,
        durationMs: options.durationMs,
        settings,
        replicaUrl: (r) => cluster.replicas[r]!.url,
        replicas: options.replicas,
        history,
        startedAt,
      }),
      playSchedule(cluster, plans, {
        startedAt,
        limits: limitsFor(scenario, options.nodes, options.replicas),
        log: (line) => log(startedAt, line),
      }),
      runFencedWriters({ ...options, settings, replicaUrl: (r) => cluster.replicas[r]!.url, history, startedAt }),
    ])
    log(
      startedAt,
      `workload done: ${history.size} holds; waiting out the quarantine (MAX_TTL_MS + MAX_LOCK_DELAY_MS: ${settings.maxTtlMs + settings.maxLockDelayMs} ms)`,
    )
    const settledAt = await settle(cluster, faults, settings, startedAt)
    const grantable = await probeGrantable({
      kinds,
      keysPerKind: options.keys,
      replicaUrls: cluster.replicas.map((r) => r.url),
      history,
      settings,
      startedAt,
    })
    const observed = await elections?.finish()
    const alive = await replicasAlive(cluster)
    const answeredLate = await grantsAnsweredLate(cluster)
    await watch.stop()

    const report = buildReport({
      options,
      command,
      scenario,
      settings,
      wallMs: performance.now() - wallStart,
      stats,
      history,
      faults,
      watch,
      fenced,
      final: {
        grantable,
        replicasAlive: alive,
        settledAfterMs: settledAt === null ? null : settledAt - options.durationMs,
        grantsAnsweredLate: answeredLate,
      },
      ...(observed ? { elections: observed } : {}),
    })
    process.stdout.write(`${formatReport(report)}\n`)
    if (options.json) await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`)
    return report.passed
  } finally {
    await cluster.close()
  }
}

async function main(): Promise<number> {
  let options: Options
  try {
    options = parseOptions(process.argv.slice(2))
    serviceSettings(options.serviceEnv)
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError)) throw err
    if (!err.message) {
      process.stdout.write(USAGE) // --help
      return 0
    }
    process.stderr.write(`chaos: ${err.message}\n${USAGE}`)
    return 2
  }
  // Bounded whatever happens; exiting runs the helpers' exit hooks, which kill every process started.
  setTimeout(() => {
    process.stderr.write(`chaos: still running ${OVERALL_SLACK_MS / 1000} s past --duration: giving up\n`)
    process.exit(3)
  }, options.durationMs + OVERALL_SLACK_MS).unref()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
  try {
    return (await run(options)) ? 0 : 1
  } catch (err) {
    process.stderr.write(`chaos: the run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.stderr.write(`chaos: seed ${options.seed}; reproduce: ${reproduceCommand(options)}\n`)
    return 3
  }
}

process.exitCode = await main()
// Child processes and sockets may keep the loop alive a moment; everything was stopped already.
process.exit(process.exitCode)
