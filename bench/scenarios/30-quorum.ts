/**
 * Quorum mode: the uncontended acquire + release flow against a service on 3 Redis nodes vs the same
 * service on 1, back to back in every repetition (issue 3: N = 3 keeps ≥ 0.7 of N = 1's throughput).
 * All nodes run on this one machine, so N = 3 also pays for two more redis-server processes' CPU.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtNumber, roundAll } from '../lib/stats.js'
import { ratioTarget, versus } from '../lib/summary.js'

const CONNECTIONS = [16, 64] as const
const TARGET_RATIO = 0.7

const scenario: Scenario = {
  id: 'quorum',
  title: 'Quorum: N = 3 Redis nodes vs N = 1 (uncontended acquire + release)',
  description:
    'The uncontended flow against the service on 3 redis-servers (Redlock majority of 2) and on 1, measured back to back. ' +
    'Ratios are N3 ÷ N1.',
  async run(ctx) {
    const [n1, n3] = await Promise.all([ctx.service({ nodes: 1 }), ctx.service({ nodes: 3 })])
    const rows: string[][] = []
    const figures: Record<string, unknown> = {}
    const targets: TargetCheck[] = []
    const notes: string[] = []
    for (const connections of CONNECTIONS) {
      const cmp = await ctx.compare(
        [
          { name: 'N1', server: n1 },
          { name: 'N3', server: n3 },
        ],
        { connections, flow: acquireRelease },
      )
      notes.push(...cmp.errorNotes())
      const byName: Record<string, unknown> = {}
      for (const name of ['N1', 'N3']) {
        const { median: m, ratio: x, cells } = versus(cmp, name, 'N1')
        rows.push([name, String(connections), ...cells, fmtNumber(m.redisUsPerRequest)])
        byName[name] = { median: roundAll(m), ratioToN1: roundAll(x), runs: cmp.of(name) }
        if (name !== 'N1') {
          targets.push(ratioTarget(`quorum N3 ÷ N1 req/s, ${connections} connections`, x.requestsPerSec, TARGET_RATIO, 'issue 3'))
        }
      }
      figures[`c${connections}`] = byName
    }
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
