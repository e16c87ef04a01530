/** The soak's verdicts from its samples, and the report (JSON and Markdown) they make. Pure functions. */
import type { Sample } from './sampler.js'
import { judgeBound, judgeGrowth, quantile, type BoundVerdict, type GrowthBound, type GrowthVerdict } from './trend.js'

export interface Bounds {
  rss: GrowthBound
  heap: GrowthBound
  redisMemory: GrowthBound
  redisKeys: GrowthBound
  /** each interval's event-loop delay p99, ms */
  eventLoopP99Ms: number
  /** errors / requests over the whole run */
  errorRate: number
  /** the share of the run (by time) before the growth checks look */
  warmupShare: number
}

const MiB = 1024 * 1024

export const DEFAULT_BOUNDS: Bounds = {
  rss: { relative: 0.1, absolute: 8 * MiB },
  heap: { relative: 0.1, absolute: 8 * MiB },
  redisMemory: { relative: 0.1, absolute: 2 * MiB },
  redisKeys: { relative: 0.1, absolute: 200 },
  eventLoopP99Ms: 200,
  errorRate: 0.01,
  warmupShare: 0.5,
}

export interface RunFacts {
  label: string
  nodes: number
  durationS: number
  rate: number
  requests: number
  errors: number
  errorSamples: string[]
  statuses: Record<string, number>
  holds: number
  violations: string[]
  freshKeys: number
}

export interface SeriesSummary {
  first: number
  last: number
  min: number
  max: number
}

export interface RunReport extends RunFacts {
  passed: boolean
  failures: string[]
  growth: { rss: GrowthVerdict; heap: GrowthVerdict; redisMemory: GrowthVerdict[]; redisKeys: GrowthVerdict[] }
  eventLoop: BoundVerdict & { p50OfP99: number }
  errorRate: number
  summary: Record<'rssBytes' | 'heapUsedBytes' | 'activeHandles' | 'requestsPerSecond' | 'latencyP99Ms', SeriesSummary> & {
    redisUsedMemory: SeriesSummary[]
    redisKeys: SeriesSummary[]
  }
  samples: Sample[]
}

function summarize(values: readonly number[]): SeriesSummary {
  const finite = values.filter(Number.isFinite)
  return {
    first: finite[0] ?? NaN,
    last: finite.at(-1) ?? NaN,
    min: finite.length ? Math.min(...finite) : NaN,
    max: finite.length ? Math.max(...finite) : NaN,
  }
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`

/** Every check of one run: growth after warm-up, event-loop delay, error rate, the history, and enough samples. */
export function judgeRun(facts: RunFacts, samples: readonly Sample[], bounds: Bounds = DEFAULT_BOUNDS): RunReport {
  const series = (pick: (s: Sample) => number) => samples.map((s) => ({ t: s.t, v: pick(s) }))
  const nodes = samples[0]?.redisUsedMemory.length ?? 0
  const perNode = Array.from({ length: nodes }, (_, i) => i)
  const growth = {
    rss: judgeGrowth(
      series((s) => s.rssBytes),
      bounds.rss,
      bounds.warmupShare,
    ),
    heap: judgeGrowth(
      series((s) => s.heapUsedBytes),
      bounds.heap,
      bounds.warmupShare,
    ),
    redisMemory: perNode.map((i) =>
      judgeGrowth(
        series((s) => s.redisUsedMemory[i] ?? NaN),
        bounds.redisMemory,
        bounds.warmupShare,
      ),
    ),
    redisKeys: perNode.map((i) =>
      judgeGrowth(
        series((s) => s.redisKeys[i] ?? NaN),
        bounds.redisKeys,
        bounds.warmupShare,
      ),
    ),
  }
  const lags = samples.map((s) => s.eventLoopP99Ms).filter(Number.isFinite)
  const eventLoop = { ...judgeBound(lags, bounds.eventLoopP99Ms), p50OfP99: quantile(lags, 0.5) }
  const errorRate = facts.requests === 0 ? 1 : facts.errors / facts.requests

  const failures: string[] = []
  const grew = (what: string, v: GrowthVerdict, unit: (n: number) => string) => {
    if (!v.ok) {
      failures.push(
        `${what} kept growing after warm-up: ${unit(v.growth)} over ${(v.to - v.from).toFixed(0)} s ` +
          `(Theil–Sen slope ${unit(v.slopePerSecond * 60)}/min, ${(v.relativeGrowth * 100).toFixed(1)}% of its median ${unit(v.median)}; ` +
          `allowed ${unit(v.allowed)}; it ended ${unit(v.aboveWarmup)} above the warm-up's highest floor)`,
      )
    }
  }
  grew('service RSS', growth.rss, mib)
  grew('service heap used', growth.heap, mib)
  growth.redisMemory.forEach((v, i) => grew(`Redis node ${i} used_memory`, v, mib))
  growth.redisKeys.forEach((v, i) => grew(`Redis node ${i} key count`, v, (n) => n.toFixed(0)))
  if (!eventLoop.ok) {
    failures.push(
      `event-loop delay p99 over ${bounds.eventLoopP99Ms} ms in ${eventLoop.over} of ${eventLoop.samples} samples (worst ${eventLoop.worst.toFixed(0)} ms)`,
    )
  }
  if (lags.length === 0) failures.push('no event-loop delay was sampled (is /metrics reachable?)')
  if (errorRate > bounds.errorRate) {
    failures.push(
      `error rate ${(errorRate * 100).toFixed(2)}% (${facts.errors} of ${facts.requests}) over the bound ${bounds.errorRate * 100}%`,
    )
  }
  if (facts.holds === 0) failures.push('no hold was recorded: the history proves nothing')
  if (facts.violations.length > 0)
    failures.push(`${facts.violations.length} history violation(s): ${facts.violations.slice(0, 3).join('; ')}`)
  if (samples.length < 10) failures.push(`only ${samples.length} samples: too few to judge a trend (run longer or sample more often)`)

  return {
    ...facts,
    passed: failures.length === 0,
    failures,
    growth,
    eventLoop,
    errorRate,
    summary: {
      rssBytes: summarize(samples.map((s) => s.rssBytes)),
      heapUsedBytes: summarize(samples.map((s) => s.heapUsedBytes)),
      activeHandles: summarize(samples.map((s) => s.activeHandles)),
      requestsPerSecond: summarize(samples.map((s) => s.requestsPerSecond)),
      latencyP99Ms: summarize(samples.map((s) => s.latencyP99Ms)),
      redisUsedMemory: perNode.map((i) => summarize(samples.map((s) => s.redisUsedMemory[i] ?? NaN))),
      redisKeys: perNode.map((i) => summarize(samples.map((s) => s.redisKeys[i] ?? NaN))),
    },
    samples: [...samples],
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`

function growthRow(what: string, v: GrowthVerdict, unit: (n: number) => string, s: SeriesSummary): string {
  return (
    `| ${what} | ${unit(s.first)} → ${unit(s.last)} | ${unit(v.median)} | ${unit(v.slopePerSecond * 60)}/min | ` +
    `${unit(v.growth)} (${pct(v.relativeGrowth)}) | ${unit(v.aboveWarmup)} | ${unit(v.allowed)} | ${v.ok ? 'ok' : '**FAIL**'} |`
  )
}

/** One run's section of the Markdown report; `plot` is the SVG's file name, next to the report. */
export function runMarkdown(r: RunReport, plot: string): string {
  const keys = (n: number) => n.toFixed(0)
  const lines = [
    `## ${r.label}: ${r.passed ? 'passed' : 'FAILED'}`,
    '',
    `${r.durationS.toFixed(0)} s at ${r.rate} operations/s: ${r.requests} requests (${(r.requests / Math.max(1, r.durationS)).toFixed(0)}/s), ` +
      `${r.errors} errors (${(r.errorRate * 100).toFixed(3)}%), ${r.holds} holds checked, ${r.violations.length} history violations, ` +
      `${r.freshKeys} fresh keys.`,
    '',
    ...(r.failures.length ? ['Failures:', '', ...r.failures.map((f) => `- ${f}`), ''] : []),
    `Growth after warm-up (the judged window is ${r.growth.rss.from.toFixed(0)}–${r.growth.rss.to.toFixed(0)} s):`,
    '',
    '| series | first → last | median | Theil–Sen slope | growth over the window | above the warm-up | allowed | verdict |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    growthRow('service RSS', r.growth.rss, mib, r.summary.rssBytes),
    growthRow('service heap used', r.growth.heap, mib, r.summary.heapUsedBytes),
    ...r.growth.redisMemory.map((v, i) => growthRow(`Redis ${i} used_memory`, v, mib, r.summary.redisUsedMemory[i] as SeriesSummary)),
    ...r.growth.redisKeys.map((v, i) => growthRow(`Redis ${i} keys`, v, keys, r.summary.redisKeys[i] as SeriesSummary)),
    '',
    `Event-loop delay p99 per interval: median ${r.eventLoop.p50OfP99.toFixed(1)} ms, worst ${r.eventLoop.worst.toFixed(1)} ms, ` +
      `${r.eventLoop.over} of ${r.eventLoop.samples} intervals over ${r.eventLoop.bound} ms. ` +
      `Active handles ${r.summary.activeHandles.first} → ${r.summary.activeHandles.last} (max ${r.summary.activeHandles.max}). ` +
      `Client-side p99 latency per interval (requests not waiting in line): ${r.summary.latencyP99Ms.min.toFixed(1)}–${r.summary.latencyP99Ms.max.toFixed(1)} ms.`,
    '',
    `Answers: ${Object.entries(r.statuses)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} × ${v}`)
      .join(', ')}.`,
    '',
    ...(r.errorSamples.length ? ['First errors:', '', ...r.errorSamples.slice(0, 10).map((e) => `- ${e}`), ''] : []),
    `![${r.label}](${plot})`,
    '',
  ]
  return lines.join('\n')
}
