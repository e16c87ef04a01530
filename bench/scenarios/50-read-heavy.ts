/**
 * Read-heavy read-write locks: 90 % read / 10 % write on a handful of hot keys. Every
 * cycle a connection picks one of the keys at random and a read hold with probability 0.9 (else a
 * write hold), acquires it on /rwlocks/<key>/read|write with ?wait=5s&ttl=5s (its own token),
 * holds it ~0 ms and releases it. Readers share a key; a writer waits for them, and readers arriving
 * after a waiting writer queue behind it (writer preference), so writes cost the readers some
 * throughput: that interplay is what this measures.
 *
 * The baseline runs the same flow on its /rwlocks routes, which grant every hold at once: for it
 * this is an uncontended acquire + release (the HTTP ceiling of the cycle); ratios are service ÷
 * baseline in the same repetition.
 */
import { performance } from 'node:perf_hooks'
import { expectStatus, tokenHeaders } from '../lib/flows.js'
import type { Flow, LoadResult } from '../lib/load.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtPercent, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach } from '../lib/summary.js'

const CONNECTIONS = [16, 64] as const
const HOT_KEYS = 4
const READ_SHARE = 0.9
const TTL = '5s'
const WAIT = '5s'

const readHeavyFlow: Flow = async (ctx) => {
  const headers = tokenHeaders(ctx)
  const mode = Math.random() < READ_SHARE ? 'read' : 'write'
  const path = `/rwlocks/rw.${ctx.runId}.${Math.floor(Math.random() * HOT_KEYS)}/${mode}`
  const started = performance.now()
  const acquired = await ctx.request('acquire', 'POST', `${path}?wait=${WAIT}&ttl=${TTL}`, { headers })
  if (acquired.status === 409) {
    ctx.count(`timeout.${mode}`)
    return
  }
  expectStatus(`${mode} acquire`, acquired.status, [201], acquired.body)
  ctx.sample(`acquire.${mode}`, performance.now() - started)
  ctx.count(`granted.${mode}`)
  // Hold ~0 ms.
  const released = await ctx.request('release', 'DELETE', path, { headers })
  expectStatus(`${mode} release`, released.status, [200], released.body)
}

const perSec = (name: string) => (r: LoadResult) => (r.counters[name] ?? 0) / r.seconds
const acquireP = (r: LoadResult, p: 'p50' | 'p99') => r.labels.acquire?.latencyMs[p] ?? NaN

const scenario: Scenario = {
  id: 'read-heavy',
  title: 'Read-heavy read-write locks: 90 % read / 10 % write on 4 hot keys',
  description:
    `Each connection loops: pick one of ${HOT_KEYS} keys at random, POST /rwlocks/<key>/read (probability ${READ_SHARE}) or /write ` +
    `?wait=${WAIT}&ttl=${TTL} (own token), release at once (DELETE). Acquire latency includes the time in line. ` +
    'The baseline runs the same flow but grants every hold at once (for it this is the uncontended cycle); × base = service ÷ baseline, same repetition.',
  async run(ctx) {
    const [baseline, service] = await Promise.all([ctx.baseline(), ctx.service({ nodes: 1 })])
    const { rows, figures, notes } = await compareEach(
      ctx,
      { baseline, service },
      { connections: CONNECTIONS, flow: readHeavyFlow, drainMs: 3000 },
      (cmp, name) => {
        const m = {
          cyclesPerSec: cmp.median(name, (r) => r.cyclesPerSec),
          requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
          acquireP50Ms: cmp.median(name, (r) => acquireP(r, 'p50')),
          acquireP99Ms: cmp.median(name, (r) => acquireP(r, 'p99')),
          readAcquireP50Ms: cmp.median(name, (r) => r.samples['acquire.read']?.p50 ?? NaN),
          readAcquireP99Ms: cmp.median(name, (r) => r.samples['acquire.read']?.p99 ?? NaN),
          writeAcquireP50Ms: cmp.median(name, (r) => r.samples['acquire.write']?.p50 ?? NaN),
          writeAcquireP99Ms: cmp.median(name, (r) => r.samples['acquire.write']?.p99 ?? NaN),
          readsPerSec: cmp.median(name, perSec('granted.read')),
          writesPerSec: cmp.median(name, perSec('granted.write')),
          writeShare: cmp.median(name, (r) => {
            const reads = r.counters['granted.read'] ?? 0
            const writes = r.counters['granted.write'] ?? 0
            return writes / (reads + writes)
          }),
          timeouts: cmp.of(name).reduce((n, r) => n + (r.counters['timeout.read'] ?? 0) + (r.counters['timeout.write'] ?? 0), 0),
          serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
          redisUsPerRequest: cmp.median(name, (r) => r.cpu.redisUsPerRequest),
          errors: cmp.errors(name),
        }
        const x = {
          cyclesPerSec: cmp.ratio(name, 'baseline', (r) => r.cyclesPerSec),
          acquireP50: cmp.ratio(name, 'baseline', (r) => acquireP(r, 'p50')),
          acquireP99: cmp.ratio(name, 'baseline', (r) => acquireP(r, 'p99')),
        }
        const cells = [
          fmtNumber(m.cyclesPerSec),
          fmtRatio(x.cyclesPerSec),
          fmtMs(m.acquireP50Ms),
          fmtRatio(x.acquireP50),
          fmtMs(m.acquireP99Ms),
          fmtRatio(x.acquireP99),
          `${fmtMs(m.readAcquireP50Ms)} / ${fmtMs(m.readAcquireP99Ms)}`,
          `${fmtMs(m.writeAcquireP50Ms)} / ${fmtMs(m.writeAcquireP99Ms)}`,
          fmtNumber(m.readsPerSec),
          fmtNumber(m.writesPerSec),
          fmtPercent(m.writeShare),
          String(m.timeouts),
          fmtNumber(m.serverUsPerRequest),
        ]
        return { cells, figures: { median: roundAll(m), ratioToBaseline: roundAll(x), runs: cmp.of(name) } }
      },
    )
    return {
      columns: [
        'server',
        'conns',
        'cycles/s',
        '× base',
        'acquire p50 ms',
        '× base',
        'acquire p99 ms',
        '× base',
        'read p50 / p99 ms',
        'write p50 / p99 ms',
        'reads/s',
        'writes/s',
        'write share',
        'timeouts',
        'server CPU µs/req',
      ],
      rows,
      figures,
      notes,
    }
  },
}

export default scenario
