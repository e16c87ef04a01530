/**
 * Uncontended acquire + release on distinct keys (a new key every cycle), at 16 and 64 connections,
 * the service (one Redis) against the baseline, measured back to back in every repetition. A third
 * server, the "redis floor" (the baseline doing one Redis round trip per request and nothing else),
 * shows how much of the gap any Fastify + ioredis lock service pays on this machine.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach, target, versus } from '../lib/summary.js'

const CONNECTIONS = [16, 64] as const
/** The service's requests/s, as a share of the redis floor's: at least 0.8. */
const TARGET_RATIO_TO_FLOOR = 0.8
/** Redis CPU per request (so per cycle: two requests on both sides) of the service, ÷ the floor's: at most 1.5. */
const TARGET_REDIS_CPU_TO_FLOOR = 1.5
/** An acquire + release's p99 latency ÷ the floor's. */
const TARGET_P99_TO_FLOOR = 1.5

const scenario: Scenario = {
  id: 'uncontended',
  title: 'Uncontended acquire + release (distinct keys)',
  description:
    'Each connection loops POST /locks/:key (201) then DELETE /locks/:key (200) on a new key every cycle. ' +
    'Service on one Redis vs the baseline; × base = ÷ baseline. "redis floor" = the baseline plus the one Redis round trip ' +
    'per request no lock service can avoid (a one-line Lua script via ioredis): the best a Fastify + ioredis service can do here; ' +
    '× floor = ÷ the floor, same repetition (req/s, and Redis CPU per request).',
  async run(ctx) {
    const [baseline, floor, service] = await Promise.all([ctx.baseline(), ctx.redisFloor(), ctx.service({ nodes: 1 })])
    const targets: TargetCheck[] = []
    const { rows, figures, notes } = await compareEach(
      ctx,
      { baseline, 'redis floor': floor, service },
      { connections: CONNECTIONS, flow: acquireRelease },
      (cmp, name, connections) => {
        const { median, ratio: x, cells } = versus(cmp, name, 'baseline')
        const toFloor = {
          requestsPerSec: cmp.ratio(name, 'redis floor', (r) => r.requestsPerSec),
          redisUsPerRequest: cmp.ratio(name, 'redis floor', (r) => r.cpu.redisUsPerRequest),
          p99: cmp.ratio(name, 'redis floor', (r) => r.latencyMs.p99),
        }
        const hasRedis = name !== 'baseline'
        if (name === 'service') {
          targets.push(
            target(
              `uncontended req/s vs redis floor, ${connections} connections`,
              toFloor.requestsPerSec,
              fmtRatio(toFloor.requestsPerSec),
              '≥',
              TARGET_RATIO_TO_FLOOR,
              '×',
            ),
            target(
              `uncontended Redis CPU per cycle vs redis floor, ${connections} connections`,
              toFloor.redisUsPerRequest,
              fmtRatio(toFloor.redisUsPerRequest),
              '≤',
              TARGET_REDIS_CPU_TO_FLOOR,
              '×',
            ),
            target(
              `uncontended p99 vs redis floor, ${connections} connections`,
              toFloor.p99,
              fmtRatio(toFloor.p99),
              '≤',
              TARGET_P99_TO_FLOOR,
              '×',
            ),
          )
        }
        const m = { ...median, loaderUsPerRequest: cmp.median(name, (r) => r.cpu.loaderUsPerRequest) }
        return {
          cells: [
            ...cells,
            hasRedis ? fmtNumber(median.redisUsPerRequest) : '–',
            fmtRatio(toFloor.requestsPerSec),
            hasRedis ? fmtRatio(toFloor.redisUsPerRequest) : '–',
          ],
          figures: { median: roundAll(m), ratioToBaseline: roundAll(x), ratioToFloor: roundAll(toFloor), runs: cmp.of(name) },
        }
      },
    )
    return {
      columns: [
        'server',
        'conns',
        'cycles/s',
        'req/s',
        '× base',
        'p50 ms',
        '× base',
        'p99 ms',
        '× base',
        'server CPU µs/req',
        'redis CPU µs/req',
        'req/s × floor',
        'redis CPU × floor',
      ],
      rows,
      figures,
      targets,
      notes,
    }
  },
}

export default scenario
