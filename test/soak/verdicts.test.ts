// The soak's judging, report and plot on synthetic series: no service, no Redis, no timing.
import t from 'tap'
import { fenceRetentionFor, parseOptions, UsageError } from '../../soak/options.js'
import { renderSvg, runPanels } from '../../soak/plot.js'
import { DEFAULT_BOUNDS, judgeRun, runMarkdown, type RunFacts } from '../../soak/report.js'
import { metricValue, type Sample } from '../../soak/sampler.js'
import { floorOf, judgeBound, judgeGrowth, theilSen, type Point } from '../../soak/trend.js'
import { Rng } from '../../chaos/prng.js'

const MiB = 1024 * 1024

/** A heap-like series: a level, a sawtooth of young objects (a tooth every `tooth` s), noise, and a trend per second. */
function sawtooth(o: {
  seconds: number
  every: number
  level: number
  tooth: number
  teeth: number
  slope: number
  seed: number
}): Point[] {
  const rng = new Rng(o.seed)
  const points: Point[] = []
  for (let t = o.every; t <= o.seconds; t += o.every) {
    const phase = (t % o.tooth) / o.tooth
    points.push({ t, v: o.level + o.slope * t + o.teeth * phase + rng.between(-0.02, 0.02) * o.level })
  }
  return points
}

t.test('theilSen finds a line through outliers that tilt least squares', async (t) => {
  const line = Array.from({ length: 40 }, (_, i) => ({ t: i, v: 3 * i + 10 }))
  t.equal(theilSen(line), 3)
  const spiked = line.map((p, i) => (i % 8 === 7 ? { ...p, v: p.v + 500 } : p))
  t.equal(theilSen(spiked), 3, 'one point in eight far off does not move the median slope')
  t.equal(theilSen([{ t: 1, v: 5 }]), 0, 'one point: no slope')
})

t.test('floorOf keeps the lowest point of each block', async (t) => {
  const points = [5, 1, 9, 7, 2, 8, 6, 3, 4, 0].map((v, i) => ({ t: i, v }))
  t.same(
    floorOf(points, 5).map((p) => p.v),
    [1, 7, 2, 3, 0],
  )
  t.equal(floorOf(points.slice(0, 3), 10).length, 3, 'fewer points than blocks: every point')
})

t.test('a heap that keeps growing after warm-up fails; a flat noisy sawtooth passes', async (t) => {
  const bound = DEFAULT_BOUNDS.heap
  // 30 minutes sampled every 5 s; teeth of 30 MiB every 7 s on a 60 MiB floor.
  const base = { seconds: 1800, every: 5, level: 60 * MiB, tooth: 7, teeth: 30 * MiB }
  const flat = judgeGrowth(sawtooth({ ...base, slope: 0, seed: 1 }), bound)
  t.ok(flat.ok, `flat: growth ${(flat.growth / MiB).toFixed(2)} MiB within ${(flat.allowed / MiB).toFixed(2)} MiB`)
  t.equal(flat.samples, 180, 'the second half is judged (905–1800 s)')
  // A leak of 1 MiB a minute: 15 MiB over the judged window, hidden under 30 MiB teeth.
  const leak = judgeGrowth(sawtooth({ ...base, slope: MiB / 60, seed: 2 }), bound)
  t.notOk(leak.ok, `leak: growth ${(leak.growth / MiB).toFixed(2)} MiB over ${(leak.allowed / MiB).toFixed(2)} MiB allowed`)
  t.ok(Math.abs(leak.slopePerSecond * 60 - MiB) < 0.2 * MiB, 'the slope found is about the leak')
})

t.test('RSS that fell and climbs back to where it was is no leak; the same climb to new highs is', async (t) => {
  // 3 minutes every second: 180 MiB, down to 130 at 100 s (pages handed back), back up to 175 by 180 s.
  const level = (t: number) => (t < 100 ? 180 : 130 + ((t - 100) / 80) * 45)
  const regrow = Array.from({ length: 180 }, (_, i) => ({ t: i + 1, v: level(i + 1) * MiB }))
  const verdict = judgeGrowth(regrow, DEFAULT_BOUNDS.rss)
  t.ok(verdict.growth > verdict.allowed, 'the window alone shows a steep trend')
  t.ok(verdict.aboveWarmup < 0, 'but it ends below the warm-up’s highest floor')
  t.ok(verdict.ok)
  const leak = regrow.map((p) => (p.t < 100 ? { ...p, v: 100 * MiB } : p))
  const leaking = judgeGrowth(leak, DEFAULT_BOUNDS.rss)
  t.notOk(leaking.ok, `from 100 MiB: ends ${(leaking.aboveWarmup / MiB).toFixed(1)} MiB above the warm-up`)
})

t.test('growth during warm-up only passes; a small series under the absolute floor passes', async (t) => {
  const warming = Array.from({ length: 120 }, (_, i) => ({ t: i, v: (i < 50 ? 20 + i : 70) * MiB }))
  t.ok(judgeGrowth(warming, DEFAULT_BOUNDS.rss).ok, 'growth in the first half is warm-up')
  const tiny = Array.from({ length: 120 }, (_, i) => ({ t: i, v: MiB + i * 1024 }))
  const verdict = judgeGrowth(tiny, DEFAULT_BOUNDS.redisMemory)
  t.ok(verdict.ok, 'a 60 KiB rise of a 1 MiB Redis is within the 2 MiB floor')
  t.ok(verdict.relativeGrowth > 0.04, 'although it is several percent of it')
})

t.test('judgeBound tolerates a few samples over the bound, not more', async (t) => {
  const lags = Array.from({ length: 100 }, (_, i) => (i < 5 ? 400 : 20))
  t.ok(judgeBound(lags, 200).ok, '5 of 100 over: a neighbour, tolerated')
  const bad = judgeBound(
    lags.map((v, i) => (i < 6 ? 400 : v)),
    200,
  )
  t.notOk(bad.ok)
  t.equal(bad.over, 6)
  t.equal(bad.worst, 400)
})

function samples(o: { heapSlope: number; lag?: number; n?: number }): Sample[] {
  const rng = new Rng(7)
  return Array.from({ length: o.n ?? 120 }, (_, i) => ({
    t: (i + 1) * 5,
    rssBytes: 150 * MiB + rng.between(0, 2) * MiB,
    heapUsedBytes: 50 * MiB + o.heapSlope * (i + 1) * 5 + rng.between(0, 20) * MiB,
    eventLoopP99Ms: o.lag ?? 12 + rng.between(0, 5),
    activeHandles: 30,
    activeResources: 40,
    redisUsedMemory: [2 * MiB, 2 * MiB, 2 * MiB],
    redisKeys: [300 + rng.int(0, 20), 300, 301],
    requestsPerSecond: 100 + rng.between(-5, 5),
    errorsPerSecond: 0,
    latencyP99Ms: 8,
  }))
}

const facts: RunFacts = {
  label: '3 nodes (quorum)',
  nodes: 3,
  durationS: 600,
  rate: 40,
  requests: 60_000,
  errors: 3,
  errorSamples: [],
  statuses: { '201': 30_000, '200': 29_997, timeout: 3 },
  holds: 20_000,
  violations: [],
  freshKeys: 9_000,
}

t.test('judgeRun: a steady run passes; a leak, a slow loop, errors or a violation each fail it, and say so', async (t) => {
  const steady = judgeRun(facts, samples({ heapSlope: 0 }))
  t.ok(steady.passed, steady.failures.join('; '))
  t.equal(steady.growth.redisKeys.length, 3, 'one verdict per Redis node')

  const leak = judgeRun(facts, samples({ heapSlope: (2 * MiB) / 60 }))
  t.notOk(leak.passed)
  t.match(leak.failures.join('\n'), /service heap used kept growing after warm-up/)

  const slow = judgeRun(facts, samples({ heapSlope: 0, lag: 350 }))
  t.match(slow.failures.join('\n'), /event-loop delay p99 over 200 ms in 120 of 120 samples/)

  const errors = judgeRun({ ...facts, errors: 1_200 }, samples({ heapSlope: 0 }))
  t.match(errors.failures.join('\n'), /error rate 2\.00% \(1200 of 60000\)/)

  const unsafe = judgeRun({ ...facts, violations: ['[overlap] on locks/a'] }, samples({ heapSlope: 0 }))
  t.match(unsafe.failures.join('\n'), /1 history violation\(s\): \[overlap\] on locks\/a/)

  const empty = judgeRun({ ...facts, holds: 0 }, samples({ heapSlope: 0 }))
  t.match(empty.failures.join('\n'), /no hold was recorded/)

  const short = judgeRun(facts, samples({ heapSlope: 0, n: 6 }))
  t.match(short.failures.join('\n'), /only 6 samples/)
})

t.test('the Markdown report and the SVG plot show the series and the verdicts', async (t) => {
  const leak = judgeRun(facts, samples({ heapSlope: (2 * MiB) / 60 }))
  const md = runMarkdown(leak, 'soak-3-nodes.svg')
  t.match(md, /^## 3 nodes \(quorum\): FAILED/)
  t.match(md, /\| service heap used \| .* \| \*\*FAIL\*\* \|/)
  t.match(md, /\| Redis 2 keys \| .* \| ok \|/)
  t.match(md, /!\[3 nodes \(quorum\)\]\(soak-3-nodes\.svg\)/)

  const svg = renderSvg('soak <3 nodes> & more', runPanels(leak, 200))
  t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
  t.match(svg, /soak &lt;3 nodes&gt; &amp; more/, 'text is escaped')
  t.ok(svg.trimEnd().endsWith('</svg>'))
  const polylines = [...svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1] as string)
  // RSS, its trend, heap, its trend; 3 nodes' memory; 3 nodes' keys; loop; latency; requests, errors, handles
  t.equal(polylines.length, 4 + 3 + 3 + 1 + 1 + 3)
  const [width, height] = [Number(/width="(\d+)"/.exec(svg)?.[1]), Number(/height="(\d+)"/.exec(svg)?.[1])]
  for (const line of polylines) {
    for (const pair of line.split(' ')) {
      const [x, y] = pair.split(',').map(Number) as [number, number]
      if (!(x >= 0 && x <= width && y >= 0 && y <= height)) t.fail(`point ${pair} outside ${width}×${height}`)
    }
  }
  const heapTrend = polylines[3] as string
  const [start, end] = heapTrend.split(' ').map((p) => Number(p.split(',')[1]))
  t.ok((end as number) < (start as number), 'the heap trend line rises (SVG y grows downwards)')
})

t.test('metricValue reads an unlabelled sample of Prometheus text', async (t) => {
  const text = [
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    'process_resident_memory_bytes 151932928',
    'nodejs_heap_size_used_bytes_extra 1',
    'nodejs_heap_size_used_bytes 40123456',
    'nodejs_eventloop_lag_p99_seconds 0.012',
    'nodejs_active_handles{type="Socket"} 7',
  ].join('\n')
  t.equal(metricValue(text, 'process_resident_memory_bytes'), 151932928)
  t.equal(metricValue(text, 'nodejs_heap_size_used_bytes'), 40123456, 'not a longer name that starts the same')
  t.equal(metricValue(text, 'nodejs_eventloop_lag_p99_seconds'), 0.012)
  t.ok(Number.isNaN(metricValue(text, 'nodejs_active_handles')), 'labelled lines only: absent')
})

t.test('options: defaults, both topologies, the fence retention scaled to the run, and clear usage errors', async (t) => {
  const o = parseOptions(['--duration', '30m'])
  t.same(o.nodes, [1, 3])
  t.equal(o.durationMs, 1_800_000)
  t.equal(o.sampleMs, 5_000)
  t.equal(o.fenceRetentionMs, 180_000)
  t.equal(parseOptions([]).sampleMs, 1_000, 'a 60 s run samples every second')
  t.equal(fenceRetentionFor(60_000), 6_000)
  t.equal(fenceRetentionFor(10 * 3_600_000), 600_000, 'at most 10 min')
  t.same(parseOptions(['--nodes', '3', '--rate', '120', '--max-growth', '0.2']).nodes, [3])
  t.equal(parseOptions(['--max-growth', '0.2']).bounds.heap.relative, 0.2)
  t.throws(() => parseOptions(['--nodes', '5']), new UsageError('--nodes must be 1 or 3 (got 5)'))
  t.throws(() => parseOptions(['--duration', 'soon']), { message: /^--duration must be a duration of at least 10000 ms/ })
  t.throws(() => parseOptions(['--rate', '0']), { message: '--rate must be a number from 1 to 2000 (got 0)' })
})
