/**
 * FastHistogram and FastCounter (src/metrics-fast.ts) expose exactly what prom-client's Histogram and
 * Counter expose for the same observations: the same series in the same order, buckets, sums, counts,
 * HELP and TYPE lines; and registry.resetMetrics() zeroes them the way it zeroes prom-client's.
 */
import { Counter, Histogram, Registry } from 'prom-client'
import t from 'tap'
import { fail } from '../../src/errors.js'
import { Observed } from '../../src/locks/observe.js'
import type { Grant } from '../../src/locks/types.js'
import { createMetrics } from '../../src/metrics.js'
import { FastCounter, FastHistogram } from '../../src/metrics-fast.js'

const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const labelNames = ['mode', 'outcome'] as const
type Labels = Record<(typeof labelNames)[number], string>

/** Two registries holding the same metrics, one made with prom-client, one with the fast classes. */
function pair() {
  const slow = new Registry()
  const fast = new Registry()
  const config = { name: 'test_duration_seconds', help: 'A histogram, by mode and outcome', labelNames, buckets }
  const counterConfig = { name: 'test_events_total', help: 'A counter, by mode and outcome', labelNames }
  return {
    slow,
    fast,
    slowHistogram: new Histogram({ ...config, registers: [slow] }),
    fastHistogram: new FastHistogram({ ...config, registers: [fast] }),
    slowCounter: new Counter({ ...counterConfig, registers: [slow] }),
    fastCounter: new FastCounter({ ...counterConfig, registers: [fast] }),
    slowPlainHistogram: new Histogram({ name: 'test_plain_seconds', help: 'No labels', buckets: [0.1, 1], registers: [slow] }),
    fastPlainHistogram: new FastHistogram({ name: 'test_plain_seconds', help: 'No labels', buckets: [0.1, 1], registers: [fast] }),
    slowPlainCounter: new Counter({ name: 'test_plain_total', help: 'No labels', registers: [slow] }),
    fastPlainCounter: new FastCounter({ name: 'test_plain_total', help: 'No labels', registers: [fast] }),
  }
}

/** A small seeded generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const labelSets: Labels[] = [
  { mode: 'exclusive', outcome: 'granted' },
  { mode: 'read', outcome: 'held' },
  { mode: 'exclusive', outcome: 'error' },
  { mode: 'permit', outcome: 'granted' },
]
// On every bound, just around them, 0, tiny, huge.
const edgeValues = [
  0,
  1e-12,
  ...buckets,
  ...buckets.map((b) => b * (1 + 1e-12)),
  ...buckets.map((b) => b * (1 - 1e-12)),
  5.000001,
  7,
  1e6,
  1e300,
]

t.test('the same observations give the same exposition text', async (t) => {
  const m = pair()
  const expose = async () => ({ slow: await m.slow.metrics(), fast: await m.fast.metrics() })
  t.same(await expose().then((e) => e.fast), await expose().then((e) => e.slow), 'before any observation')

  // A series shown at 0 before anything is observed in it, then others in a different order.
  m.slowHistogram.zero(labelSets[3]!)
  m.fastHistogram.zero(labelSets[3]!)
  m.slowCounter.inc(labelSets[2]!, 0)
  m.fastCounter.zero(labelSets[2]!)
  const handles = labelSets.map((labels) => ({ histogram: m.fastHistogram.series(labels), counter: m.fastCounter.series(labels) }))
  t.equal(m.fastHistogram.series({ outcome: 'granted', mode: 'exclusive' }), handles[0]!.histogram, 'a series is resolved once')

  let index = 0
  for (const value of edgeValues) {
    const at = [1, 0, 2, 3][index++ % 4]!
    m.slowHistogram.labels(labelSets[at]!).observe(value)
    handles[at]!.histogram.observe(value)
    m.slowCounter.labels(labelSets[at]!).inc()
    handles[at]!.counter.inc()
    m.slowPlainHistogram.observe(value)
    m.fastPlainHistogram.series({}).observe(value)
  }
  const next = random(17)
  for (let i = 0; i < 5000; i++) {
    const at = Math.floor(next() * labelSets.length)
    const value = next() < 0.1 ? buckets[Math.floor(next() * buckets.length)]! : next() ** 4 * 6
    m.slowHistogram.observe(labelSets[at]!, value)
    handles[at]!.histogram.observe(value)
    if (next() < 0.5) {
      m.slowCounter.inc(labelSets[at]!)
      handles[at]!.counter.inc()
      m.slowPlainCounter.inc()
      m.fastPlainCounter.series({}).inc()
    }
  }
  const { slow, fast } = await expose()
  t.match(fast, /test_duration_seconds_bucket\{le="\+Inf",mode="read",outcome="held"\} \d+/)
  t.match(fast, /# TYPE test_events_total counter\ntest_events_total\{mode="exclusive",outcome="error"\} \d+/)
  t.equal(fast, slow)
  t.same(await m.fast.getMetricsAsJSON().then(strip), await m.slow.getMetricsAsJSON().then(strip), 'the same JSON, too')
})

t.test('a value that is not a number is dropped (prom-client throws): the exposition does not change', async (t) => {
  const m = pair()
  m.fastHistogram.series(labelSets[0]!).observe(0.2)
  m.slowHistogram.observe(labelSets[0]!, 0.2)
  for (const value of [NaN, Infinity, -Infinity]) {
    m.fastHistogram.series(labelSets[0]!).observe(value)
    t.throws(() => m.slowHistogram.observe(labelSets[0]!, value))
  }
  t.equal(await m.fast.metrics(), await m.slow.metrics())
})

t.test('registry.resetMetrics() zeroes the fast metrics as it zeroes prom-client’s', async (t) => {
  const m = pair()
  for (const labels of labelSets) {
    m.slowHistogram.observe(labels, 0.003)
    m.fastHistogram.series(labels).observe(0.003)
    m.slowCounter.inc(labels)
    m.fastCounter.series(labels).inc()
  }
  m.slowPlainCounter.inc()
  m.fastPlainCounter.series({}).inc()
  m.slow.resetMetrics()
  m.fast.resetMetrics()
  const afterReset = await m.fast.metrics()
  t.equal(afterReset, await m.slow.metrics())
  t.notMatch(afterReset, /test_duration_seconds_bucket/, 'no labelled series left')
  t.notMatch(afterReset, /test_events_total\{/, 'no labelled counter left')
  t.match(afterReset, /^test_plain_total 0$/m, 'the label-less counter is back at 0')

  // A handle resolved before the reset still counts, from 0.
  const handle = m.fastHistogram.series(labelSets[1]!)
  handle.observe(0.3)
  m.slowHistogram.observe(labelSets[1]!, 0.3)
  m.fastCounter.series(labelSets[2]!).inc()
  m.slowCounter.inc(labelSets[2]!)
  const after = await m.fast.metrics()
  t.equal(after, await m.slow.metrics())
  t.match(after, /^test_duration_seconds_count\{mode="read",outcome="held"\} 1$/m)
  t.match(after, /^test_events_total\{mode="exclusive",outcome="error"\} 1$/m)
})

t.test('label names are checked when a series is resolved; buckets must increase', async (t) => {
  const fast = new FastHistogram({ name: 'checked_seconds', help: 'Checked', labelNames, buckets, registers: [] })
  t.throws(() => fast.series({ mode: 'read' } as Labels), /outcome/)
  t.throws(() => fast.series({ mode: 'read', outcome: 'granted', key: 'k' } as Labels), /key/)
  t.throws(() => new FastHistogram({ name: 'unsorted_seconds', help: 'Unsorted', buckets: [1, 0.5], registers: [] }), /increase/)
  const registry = new Registry()
  new FastCounter({ name: 'twice_total', help: 'Registered once', registers: [registry] })
  t.throws(() => new Counter({ name: 'twice_total', help: 'Registered twice', registers: [registry] }), /already been registered/)
})

t.test('Observed counts every outcome of acquire, renew and release, also of an op that throws instead of rejecting', async (t) => {
  const metrics = createMetrics()
  const observed = new Observed(metrics)
  const grant = { regranted: false } as Grant
  await observed.renew('exclusive', () => Promise.resolve(grant))
  await t.rejects(
    observed.renew('exclusive', () => Promise.reject(fail.notOwner('k'))),
    { code: 'not_owner' },
  )
  await t.rejects(
    observed.renew('read', () => {
      throw new Error('thrown, not rejected')
    }),
    /thrown, not rejected/,
  )
  t.same(await observed.release('write', () => Promise.resolve({ key: 'k', released: false, holdCount: 1 })), {
    key: 'k',
    released: false,
    holdCount: 1,
  })
  await observed.release('write', () => Promise.resolve({ key: 'k', released: true, holdCount: 0 }))
  await t.rejects(
    observed.release('permit', () => Promise.reject(fail.notFound('k', 'gone'))),
    { code: 'lock_not_found' },
  )
  await t.rejects(
    observed.acquire('exclusive', () => Promise.reject(fail.held('k', 10))),
    { code: 'lock_held' },
  )
  // Refusals returned as values (LockEngine.acquire) count as rejected ones do; a grant as granted.
  const refusal = fail.held('k', 10)
  t.equal(await observed.acquire('write', () => Promise.resolve(refusal)), refusal, 'the refusal is handed on')
  await observed.acquire('read', () => Promise.resolve(fail.upgradeNotSupported('k')))
  await observed.acquire('read', () => Promise.resolve(grant))
  await t.rejects(
    observed.acquire('permit', () => {
      throw new Error('thrown, not rejected')
    }),
    /thrown, not rejected/,
  )
  const text = await metrics.registry.metrics()
  for (const line of [
    'lock_contention_total{mode="write"} 1',
    'lock_acquire_duration_seconds_count{mode="write",outcome="held"} 1',
    'lock_acquire_duration_seconds_count{mode="read",outcome="error"} 1',
    'lock_acquire_duration_seconds_count{mode="read",outcome="granted"} 1',
    'lock_acquire_duration_seconds_count{mode="permit",outcome="error"} 1',
    'lock_renewals_total{mode="exclusive",outcome="renewed"} 1',
    'lock_renewals_total{mode="exclusive",outcome="not_owner"} 1',
    'lock_renewals_total{mode="read",outcome="error"} 1',
    'lock_releases_total{mode="write",outcome="decremented"} 1',
    'lock_releases_total{mode="write",outcome="released"} 1',
    'lock_releases_total{mode="permit",outcome="not_found"} 1',
    'lock_contention_total{mode="exclusive"} 1',
    'lock_acquire_duration_seconds_count{mode="exclusive",outcome="held"} 1',
  ])
    t.ok(text.split('\n').includes(line), line)
})

/** getMetricsAsJSON without prom-client's exemplar fields (null on histogram values, absent on ours). */
function strip(metrics: object[]): unknown {
  return JSON.parse(JSON.stringify(metrics, (key, value: unknown) => (key === 'exemplar' ? undefined : value)))
}
