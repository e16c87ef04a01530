/**
 * Quorum mode: the uncontended acquire + release flow against a service on 3 Redis nodes vs the same
 * service on 1, back to back in every repetition (target: N = 3 keeps ≥ 0.6 of N = 1's requests/s).
 * All nodes run on this one machine, so N = 3 also pays for two more redis-server processes' CPU.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach, target, versus } from '../lib/summary.js'

const CONNECTIONS = [16, 64] as const
/** A quorum of 3 keeps at least half the requests/s of one node (three redis-servers share these 2 cores). */
const TARGET_RATIO = 0.6

const scenario: Scenario = {
  id: 'quorum',
  title: 'Quorum: N = 3 Redis nodes vs N = 1 (uncontended acquire + release)',
  description:
    'The uncontended flow against the service on 3 redis-servers (Redlock majority of 2) and on 1, measured back to back. ' +
    'Ratios are N3 ÷ N1.',
  async run(ctx) {
    const [n1, n3] = await Promise.all([ctx.service({ nodes: 1 }), ctx.service({ nodes: 3 })])
    const targets: TargetCheck[] = []
    const { rows, figures, notes } = await compareEach(
      ctx,
      { N1: n1, N3: n3 },
      { connections: CONNECTIONS, flow: acquireRelease },
      (cmp, name, connections) => {
        const { median: m, ratio: x, cells } = versus(cmp, name, 'N1')
        if (name === 'N3') {
          targets.push(
            target(
              `quorum N3 ÷ N1 req/s, ${connections} connections`,
              x.requestsPerSec,
              fmtRatio(x.requestsPerSec),
              '≥',
              TARGET_RATIO,
              '×',
            ),
          )
        }
        return {
          cells: [...cells, fmtNumber(m.redisUsPerRequest)],
          figures: { median: roundAll(m), ratioToN1: roundAll(x), runs: cmp.of(name) },
        }
      },
    )
    return {
      columns: ['nodes', 'conns', 'cycles/s', 'req/s', '× N1', 'p50 ms', '× N1', 'p99 ms', '× N1', 'server CPU µs/req', 'redis CPU µs/req'],
      rows,
      figures,
      targets,
      notes,
    }
  },
}

export default scenario
