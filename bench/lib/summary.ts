import type { Comparison } from './context.js'

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
  return { median, ratio }
}
