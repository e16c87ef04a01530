/**
 * Uncontended acquire + release on distinct keys (a new key every cycle), at 16 and 64 connections,
 * the service (one Redis) against the baseline, measured back to back in every repetition. A third
 * server, the "redis floor" (the baseline doing one Redis round trip per request and nothing else),
 * shows how much of the gap any Fastify + ioredis lock service pays on this machine.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach, target, versus } from '../lib/summary.js'

const CONNECTIONS = [16, 64] as const
/** The service's requests/s, as a share of the baseline's: at least 0.6. */
const TARGET_RATIO = 0.6

const scenario: Scenario = {
  id: 'uncontended',
  title: 'Uncontended acquire + release (distinct keys)',
  description:
    'Each connection loops POST /locks/:key (201) then DELETE /locks/:key (200) on a new key every cycle. ' +
    'Service on one Redis vs the baseline; ratios are ÷ baseline. "redis floor" = the baseline plus the one Redis round trip ' +
    'per request no lock service can avoid (a one-line Lua script via ioredis): the best a Fastify + ioredis service can do here.',
  async run(ctx) {
    const [baseline, floor, service] = await Promise.all([ctx.baseline(), ctx.redisFloor(), ctx.service({ nodes: 1 })])
    const targets: TargetCheck[] = []
    const { rows, figures, notes } = await compareEach(
      ctx,
      { baseline, 'redis floor': floor, service },
      { connections: CONNECTIONS, flow: acquireRelease },
      (cmp, name, connections) => {
        const { median, ratio: x, cells } = versus(cmp, name, 'baseline')
        if (name === 'service') {
          targets.push(
            target(
              `uncontended req/s vs baseline, ${connections} connections`,
              x.requestsPerSec,
              fmtRatio(x.requestsPerSec),
              '≥',
              TARGET_RATIO,
              '×',
            ),
          )
        }
        const m = { ...median, loaderUsPerRequest: cmp.median(name, (r) => r.cpu.loaderUsPerRequest) }
        return { cells, figures: { median: roundAll(m), ratioToBaseline: roundAll(x), runs: cmp.of(name) } }
      },
    )
    return {
      columns: ['server', 'conns', 'cycles/s', 'req/s', '× base', 'p50 ms', '× base', 'p99 ms', '× base', 'server CPU µs/req'],
      rows,
      figures,
      targets,
      notes,
    }
  },
}

export default scenario
