/**
 * Nanoseconds per metric update on the hot path: a prom-client child (`histogram.labels(...)`,
 * `counter.labels(...)`, resolved once, as the service used them) against a FastHistogram /
 * FastCounter series (src/metrics-fast.ts), in a tight loop; also both behind the service's
 * `seriesBy` lookup (two label values, as src/locks/observe.ts does per request).
 *
 *   node --import tsx bench/metrics-observe.ts [--n 2000000] [--rounds 7]
 *
 * Prints the median over rounds (the variants alternate inside every round).
 */
import { parseArgs } from 'node:util'
import { Counter, Histogram, Registry } from 'prom-client'
import { FastCounter, FastHistogram } from '../src/metrics-fast.js'
import { seriesBy } from '../src/metrics.js'

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '7' } } })
const n = Number(values.n)
const rounds = Number(values.rounds)

const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const labelNames = ['mode', 'outcome'] as const
const slow = new Registry()
const fast = new Registry()
const slowHistogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames, buckets, registers: [slow] })
const fastHistogram = new FastHistogram({ name: 'h_seconds', help: 'h', labelNames, buckets, registers: [fast] })
const slowCounter = new Counter({ name: 'c_total', help: 'c', labelNames, registers: [slow] })
const fastCounter = new FastCounter({ name: 'c_total', help: 'c', labelNames, registers: [fast] })

// Latencies as the service sees them: mostly under a millisecond, a few above.
const latencies = Array.from({ length: 1024 }, (_, i) => 0.0001 + ((i * 7919) % 1024) / 1024 / (i % 16 === 0 ? 50 : 500))
const labels = { mode: 'exclusive', outcome: 'granted' }

const slowChild = slowHistogram.labels(labels)
const fastSeries = fastHistogram.series(labels)
const slowCounterChild = slowCounter.labels(labels)
const fastCounterSeries = fastCounter.series(labels)
const slowBy = seriesBy((mode, outcome) => slowHistogram.labels({ mode, outcome }))
const fastBy = seriesBy((mode, outcome) => fastHistogram.series({ mode, outcome }))

const variants: Record<string, () => void> = {
  'histogram observe, prom-client child': () => {
    for (let i = 0; i < n; i++) slowChild.observe(latencies[i & 1023] ?? 0)
  },
  'histogram observe, FastHistogram series': () => {
    for (let i = 0; i < n; i++) fastSeries.observe(latencies[i & 1023] ?? 0)
  },
  'counter inc, prom-client child': () => {
    for (let i = 0; i < n; i++) slowCounterChild.inc()
  },
  'counter inc, FastCounter series': () => {
    for (let i = 0; i < n; i++) fastCounterSeries.inc()
  },
  'seriesBy + observe, prom-client child': () => {
    for (let i = 0; i < n; i++) slowBy('exclusive', 'granted').observe(latencies[i & 1023] ?? 0)
  },
  'seriesBy + observe, FastHistogram series': () => {
    for (let i = 0; i < n; i++) fastBy('exclusive', 'granted').observe(latencies[i & 1023] ?? 0)
  },
}

const results = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]))
for (let round = 0; round < rounds; round++) {
  const names = Object.keys(variants)
  if (round % 2 === 1) names.reverse()
  for (const name of names) {
    const started = process.hrtime.bigint()
    variants[name]?.()
    results.get(name)?.push(Number(process.hrtime.bigint() - started) / n)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
console.log(`ns per update, median of ${rounds} rounds of ${n} (node ${process.version}):`)
for (const [name, ns] of results) console.log(`  ${name.padEnd(44)} ${median(ns).toFixed(1)} ns`)
