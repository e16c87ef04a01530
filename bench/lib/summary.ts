import type { Comparison } from './context.js'
import type { TargetCheck } from './scenario.js'
import { fmtMs, fmtNumber, fmtRatio } from './stats.js'

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
  const isReference = name === reference
  const ratio = {
    requestsPerSec: isReference ? 1 : cmp.ratio(name, reference, (r) => r.requestsPerSec),
    p50: isReference ? 1 : cmp.ratio(name, reference, (r) => r.latencyMs.p50),
    p99: isReference ? 1 : cmp.ratio(name, reference, (r) => r.latencyMs.p99),
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

/** A target of the form "this same-run ratio ≥ goal×". */
export function ratioTarget(name: string, ratio: number, goal: number, source: string): TargetCheck {
  return { name, value: ratio, shown: fmtRatio(ratio), goal: `≥ ${goal}×`, pass: ratio >= goal, source }
}
