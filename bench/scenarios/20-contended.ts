/**
 * Contended acquire on ONE key without waiting, at 16 and 64 connections, each with its own random
 * token: POST /locks/:key; whoever is granted releases at once and tries again. Most attempts find
 * the lock held (409 lock_held). The baseline grants everything, so it answers a POST + DELETE per
 * cycle; the redis floor (one Redis round trip per request: SET NX / compare-and-delete) refuses as
 * the service does, so its req/s is the one the service's 409 path is measured against. The
 * service's holds are checked for safety (lib/history.ts).
 */
import { performance } from 'node:perf_hooks'
import { expectStatus, tokenHeaders } from '../lib/flows.js'
import { HoldHistory } from '../lib/history.js'
import type { Flow, LoadResult } from '../lib/load.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { compareEach, historyTarget, target, versus } from '../lib/summary.js'
import { fmtMs, fmtNumber, fmtPercent, fmtRatio, roundAll } from '../lib/stats.js'

const CONNECTIONS = [16, 64] as const
/** The service's requests/s with most acquires refused, as a share of the redis floor's: at least 0.8. */
const TARGET_RATIO_TO_FLOOR = 0.8

/** `history`: where the grants are recorded for the safety check (a server that excludes). */
const contendedFlow =
  (history?: HoldHistory): Flow =>
  async (ctx) => {
    const headers = tokenHeaders(ctx)
    // ttl bounds how long a lost release could keep the key held (never in practice: releases are checked).
    const path = `/locks/c.${ctx.runId}`
    const requestStartedAt = performance.now()
    const acquired = await ctx.request('acquire', 'POST', `${path}?ttl=2s`, { headers })
    const responseAt = performance.now()
    if (acquired.status === 409) {
      ctx.count('held')
      return
    }
    expectStatus('acquire', acquired.status, [200, 201], acquired.body)
    ctx.count('granted')
    history?.record(ctx, path, { mode: 'exclusive' }, { body: acquired.body, requestStartedAt, responseAt }, performance.now())
    const released = await ctx.request('release', 'DELETE', path, { headers })
    expectStatus('release', released.status, [200], released.body)
  }

const attempts = (r: LoadResult) => (r.counters.held ?? 0) + (r.counters.granted ?? 0)

const scenario: Scenario = {
  id: 'contended',
  title: 'Contended acquire on one key, no waiting',
  description:
    'Connections with their own random tokens POST the same key without waiting; a grant is released at once. ' +
    '409 rate = share of acquires answered 409 lock_held. × base = ÷ baseline (which grants every POST); ' +
    '× floor = ÷ the redis floor (one Redis round trip per request, refusing as the service does).',
  async run(ctx) {
    const [baseline, floor, service] = await Promise.all([ctx.baseline(), ctx.redisFloor(), ctx.service({ nodes: 1 })])
    const history = new HoldHistory()
    const targets: TargetCheck[] = []
    const { rows, figures, notes } = await compareEach(
      ctx,
      { baseline, 'redis floor': floor, service: { server: service, flow: contendedFlow(history) } },
      { connections: CONNECTIONS, flow: contendedFlow() },
      (cmp, name, connections) => {
        const m = {
          requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
          acquiresPerSec: cmp.median(name, (r) => attempts(r) / r.seconds),
          grantsPerSec: cmp.median(name, (r) => (r.counters.granted ?? 0) / r.seconds),
          heldRate: cmp.median(name, (r) => (r.counters.held ?? 0) / attempts(r)),
          p50Ms: cmp.median(name, (r) => r.latencyMs.p50),
          p99Ms: cmp.median(name, (r) => r.latencyMs.p99),
          serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
          redisUsPerRequest: cmp.median(name, (r) => r.cpu.redisUsPerRequest),
          errors: cmp.errors(name),
        }
        const x = versus(cmp, name, 'baseline').ratio
        const toFloor = cmp.ratio(name, 'redis floor', (r) => r.requestsPerSec)
        if (name === 'service') {
          targets.push(
            target(
              `contended req/s vs redis floor, ${connections} connections`,
              toFloor,
              fmtRatio(toFloor),
              '≥',
              TARGET_RATIO_TO_FLOOR,
              '×',
            ),
          )
        }
        const cells = [
          fmtNumber(m.requestsPerSec),
          fmtRatio(x.requestsPerSec),
          fmtRatio(toFloor),
          fmtNumber(m.acquiresPerSec),
          fmtNumber(m.grantsPerSec),
          fmtPercent(m.heldRate),
          fmtMs(m.p50Ms),
          fmtMs(m.p99Ms),
          fmtNumber(m.serverUsPerRequest),
          fmtNumber(m.redisUsPerRequest),
        ]
        return { cells, figures: { median: roundAll(m), ratioToBaseline: roundAll(x), ratioToFloor: toFloor, runs: cmp.of(name) } }
      },
    )
    const checked = historyTarget('contended, service', history)
    return {
      columns: [
        'server',
        'conns',
        'req/s',
        '× base',
        '× floor',
        'acquires/s',
        'grants/s',
        '409 rate',
        'p50 ms',
        'p99 ms',
        'server CPU µs/req',
        'redis CPU µs/req',
      ],
      rows,
      figures,
      targets: [...targets, checked.target],
      notes: [...notes, checked.note],
    }
  },
}

export default scenario
