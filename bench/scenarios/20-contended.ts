/**
 * Contended acquire on ONE key without waiting: 16 connections, each with its own random token,
 * POST /locks/:key; whoever is granted releases at once and tries again. Most attempts find the lock
 * held (409 lock_held). The baseline grants everything, so it answers a POST + DELETE per cycle.
 */
import { expectStatus, tokenHeaders } from '../lib/flows.js'
import type { Flow, LoadResult } from '../lib/load.js'
import type { Scenario } from '../lib/scenario.js'
import { compareEach, versus } from '../lib/summary.js'
import { fmtMs, fmtNumber, fmtPercent, fmtRatio, roundAll } from '../lib/stats.js'

const CONNECTIONS = 16

const contendedFlow: Flow = async (ctx) => {
  const headers = tokenHeaders(ctx)
  // ttl bounds how long a lost release could keep the key held (never in practice: releases are checked).
  const path = `/locks/c.${ctx.runId}`
  const acquired = await ctx.request('acquire', 'POST', `${path}?ttl=2s`, { headers })
  if (acquired.status === 409) {
    ctx.count('held')
    return
  }
  expectStatus('acquire', acquired.status, [200, 201], acquired.body)
  ctx.count('granted')
  const released = await ctx.request('release', 'DELETE', path, { headers })
  expectStatus('release', released.status, [200], released.body)
}

const attempts = (r: LoadResult) => (r.counters.held ?? 0) + (r.counters.granted ?? 0)

const scenario: Scenario = {
  id: 'contended',
  title: 'Contended acquire on one key, no waiting',
  description:
    `${CONNECTIONS} connections with their own random tokens POST the same key without waiting; a grant is released at once. ` +
    '409 rate = share of acquires answered 409 lock_held. Ratios are service ÷ baseline (which grants every POST).',
  async run(ctx) {
    const [baseline, service] = await Promise.all([ctx.baseline(), ctx.service({ nodes: 1 })])
    const { rows, figures, notes } = await compareEach(
      ctx,
      { baseline, service },
      { connections: [CONNECTIONS], flow: contendedFlow },
      (cmp, name) => {
        const m = {
          requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
          acquiresPerSec: cmp.median(name, (r) => attempts(r) / r.seconds),
          grantsPerSec: cmp.median(name, (r) => (r.counters.granted ?? 0) / r.seconds),
          heldRate: cmp.median(name, (r) => (r.counters.held ?? 0) / attempts(r)),
          p50Ms: cmp.median(name, (r) => r.latencyMs.p50),
          p99Ms: cmp.median(name, (r) => r.latencyMs.p99),
          serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
          errors: cmp.errors(name),
        }
        const x = versus(cmp, name, 'baseline').ratio
        const cells = [
          fmtNumber(m.requestsPerSec),
          fmtRatio(x.requestsPerSec),
          fmtNumber(m.acquiresPerSec),
          fmtNumber(m.grantsPerSec),
          fmtPercent(m.heldRate),
          fmtMs(m.p50Ms),
          fmtRatio(x.p50),
          fmtMs(m.p99Ms),
          fmtRatio(x.p99),
        ]
        return { cells, figures: { median: roundAll(m), ratioToBaseline: roundAll(x), runs: cmp.of(name) } }
      },
    )
    return {
      columns: ['server', 'conns', 'req/s', '× base', 'acquires/s', 'grants/s', '409 rate', 'p50 ms', '× base', 'p99 ms', '× base'],
      rows,
      figures: figures[`c${CONNECTIONS}`] ?? {},
      notes,
    }
  },
}

export default scenario
