/** What the throughput scenarios share: one comparison per connection count, their medians and ratios, targets. */
import type { BenchContext, Comparison, RunSpec, Variant } from './context.js'
import type { HttpServer } from './processes.js'
import type { TargetCheck } from './scenario.js'
import type { LoadResult } from './load.js'
import type { HoldHistory } from './history.js'
import { fmtMs, fmtNumber, fmtRatio, median } from './stats.js'

/**
 * `ctx.compare` of the servers (by name, in this order; a server may come with its own flow) at each
 * connection count; `each` gives every
 * server's cells and figures: rows are [name, connections, ...cells], figures[`c${connections}`][name].
 */
export async function compareEach(
  ctx: BenchContext,
  servers: Readonly<Record<string, HttpServer | Omit<Variant, 'name'>>>,
  spec: Omit<RunSpec, 'connections'> & { connections: readonly number[] },
  each: (cmp: Comparison, name: string, connections: number) => { cells: string[]; figures: unknown },
): Promise<{ rows: string[][]; figures: Record<string, Record<string, unknown>>; notes: string[] }> {
  const rows: string[][] = []
  const figures: Record<string, Record<string, unknown>> = {}
  const notes: string[] = []
  // A server alone, or a server with its own flow.
  const variants = Object.entries(servers).map(([name, s]) => ('server' in s ? { name, ...s } : { name, server: s }))
  for (const connections of spec.connections) {
    const cmp = await ctx.compare(variants, { ...spec, connections })
    notes.push(...cmp.errorNotes())
    const byName: Record<string, unknown> = {}
    for (const { name } of variants) {
      const { cells, figures: f } = each(cmp, name, connections)
      rows.push([name, String(connections), ...cells])
      byName[name] = f
    }
    figures[`c${connections}`] = byName
  }
  return { rows, figures, notes }
}

/** The medians every throughput scenario reports for one server, and its ratios to a reference server. */
export function versus(cmp: Comparison, name: string, reference: string) {
  const median = {
    cyclesPerSec: cmp.median(name, (r) => r.cyclesPerSec),
    requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
    p50Ms: cmp.median(name, (r) => r.latencyMs.p50),
    p99Ms: cmp.median(name, (r) => r.latencyMs.p99),
    serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
    redisUsPerRequest: cmp.median(name, (r) => r.cpu.redisUsPerRequest),
    errors: cmp.errors(name),
  }
  const ratio = {
    requestsPerSec: cmp.ratio(name, reference, (r) => r.requestsPerSec),
    p50: cmp.ratio(name, reference, (r) => r.latencyMs.p50),
    p99: cmp.ratio(name, reference, (r) => r.latencyMs.p99),
  }
  /** The row cells both throughput tables share: cycles/s, req/s, ×, p50, ×, p99, ×, server CPU. */
  const cells = [
    fmtNumber(median.cyclesPerSec),
    fmtNumber(median.requestsPerSec),
    fmtRatio(ratio.requestsPerSec),
    fmtMs(median.p50Ms),
    fmtRatio(ratio.p50),
    fmtMs(median.p99Ms),
    fmtRatio(ratio.p99),
    fmtNumber(median.serverUsPerRequest),
  ]
  return { median, ratio, cells }
}

/** A target "value ≥ limit" or "value ≤ limit"; the goal reads e.g. "≥ 0.6×", "≤ 2 ms", "≥ 1,000/s". */
export function target(name: string, value: number, shown: string, op: '≥' | '≤', limit: number, unit = ''): TargetCheck {
  return { name, value, shown, goal: `${op} ${limit.toLocaleString('en-US')}${unit}`, pass: op === '≥' ? value >= limit : value <= limit }
}

/** Grants per second of a run of a waiting cycle (lib/flows.ts waitingCycle). */
export const grantsPerSec = (r: LoadResult) => (r.counters.granted ?? 0) / r.seconds

/** The hand-off percentile of a run of a waiting cycle (NaN when it has none). */
export const handoff = (pick: 'p50' | 'p99') => (r: LoadResult) => r.samples.handoff?.[pick] ?? NaN

/** Grants per connection in one run of a waiting cycle (a connection with none counts as 0). */
export function perConnection(r: LoadResult): { min: number; max: number; ratio: number } {
  const counts = Array.from({ length: r.connections }, (_, c) => r.counters[`grants.c${c}`] ?? 0)
  const min = Math.min(...counts)
  const max = Math.max(...counts)
  return { min, max, ratio: min > 0 ? max / min : Infinity }
}

/**
 * The medians the waiting scenarios (hot-key-wait, semaphore-wait) report for one server: grants/s,
 * hand-off (NaN where `handoffs` is false: the baseline's holds overlap), acquire latency, fairness
 * (median of the per-repetition max ÷ min, Infinity when some connection got nothing), CPU per grant.
 */
export function waitingMedians(cmp: Comparison, name: string, handoffs = true) {
  const fair = cmp.of(name).map(perConnection)
  const median_ = {
    grantsPerSec: cmp.median(name, grantsPerSec),
    requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
    handoffP50Ms: handoffs ? cmp.median(name, handoff('p50')) : NaN,
    handoffP99Ms: handoffs ? cmp.median(name, handoff('p99')) : NaN,
    acquireP50Ms: cmp.median(name, (r) => r.labels.acquire?.latencyMs.p50 ?? NaN),
    acquireP99Ms: cmp.median(name, (r) => r.labels.acquire?.latencyMs.p99 ?? NaN),
    releaseP50Ms: cmp.median(name, (r) => r.labels.release?.latencyMs.p50 ?? NaN),
    fewestGrants: median(fair.map((f) => f.min)),
    mostGrants: median(fair.map((f) => f.max)),
    fairness: median(
      fair.map((f) => f.ratio),
      true,
    ),
    timeouts: cmp.of(name).reduce((n, r) => n + (r.counters.timeout ?? 0), 0),
    serverUsPerGrant: cmp.median(name, (r) => (r.cpu.serverCores * 1e6) / grantsPerSec(r)),
    redisUsPerGrant: cmp.median(name, (r) => (r.cpu.redisCores * 1e6) / grantsPerSec(r)),
    errors: cmp.errors(name),
  }
  const fairness = Number.isFinite(median_.fairness) ? median_.fairness.toFixed(2) : median_.fairness === Infinity ? '∞' : '–'
  return { median: median_, fair, fairness }
}

/** The safety target of a contended scenario: every hold `history` recorded checked, none in conflict. */
export function historyTarget(name: string, history: HoldHistory): { target: TargetCheck; note: string } {
  const { holds, violations, first } = history.check()
  const shown = `${violations} in ${holds.toLocaleString('en-US')} holds`
  return {
    // No holds recorded proves nothing: that fails too.
    target: {
      ...target(`${name}: history violations (overlap, fence order)`, violations, shown, '≤', 0),
      ...(holds === 0 ? { pass: false } : {}),
    },
    note: `${name}: the history checker (harness/history.ts) found ${shown}${first ? ` — first: ${first}` : ''}.`,
  }
}
