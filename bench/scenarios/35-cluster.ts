/**
 * The service on a Redis Cluster of 3 masters (REDIS_MODE=cluster, no replicas) against the same
 * service on one Redis, measured back to back in every repetition; "× single" = cluster ÷ single.
 *
 * - uncontended acquire + release on distinct keys (a new key every cycle): the keys spread over the
 *   16384 slots, so over all three masters — this is also the "many keys" case;
 * - one hot key, every client waiting in line (the hot-key-wait flow): one slot, one master; the
 *   hand-off includes the wake-up push, which in a cluster travels over the cluster bus to the node
 *   the waiter's replica subscribes on (classic PUBLISH; see docs/topologies.md "Redis Cluster and Sentinel").
 *
 * On this 2-core machine all three masters, the service and the load generator share two cores, so
 * spreading keys cannot add CPU: the ratio shows the cluster's overhead (routing, the bus), not its
 * scaling. On separate hosts each master brings its own core.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach, grantsPerSec, versus, waitingMedians } from '../lib/summary.js'
import { hotKeyFlow } from './40-hot-key-wait.js'

const CONNECTIONS = [16, 64] as const

const scenario: Scenario = {
  id: 'cluster',
  title: 'Redis Cluster (3 masters) vs one Redis',
  description:
    'The same service on one Redis ("single") and on a 3-master Redis Cluster ("cluster"), alternating per repetition; × single = cluster ÷ single. ' +
    'Uncontended: POST then DELETE on a new key every cycle (keys spread over all masters). ' +
    'Hot key: every connection waits in line on one lock (one master); hand-off = a DELETE sent → the next 201, as in hot-key-wait. ' +
    'All Redis processes share this machine’s 2 cores with the service and the load generator.',
  async run(ctx) {
    const [single, cluster] = await Promise.all([ctx.service({ nodes: 1 }), ctx.clusterService(3)])
    const uncontended = await compareEach(ctx, { single, cluster }, { connections: CONNECTIONS, flow: acquireRelease }, (cmp, name) => {
      const { median, ratio, cells } = versus(cmp, name, 'single')
      return { cells: ['uncontended', ...cells], figures: { median: roundAll(median), ratioToSingle: roundAll(ratio) } }
    })
    const hot = await compareEach(ctx, { single, cluster }, { connections: CONNECTIONS, flow: hotKeyFlow, drainMs: 3000 }, (cmp, name) => {
      const { median: m } = waitingMedians(cmp, name)
      const x = cmp.ratio(name, 'single', grantsPerSec)
      const handoffX = cmp.ratio(name, 'single', (r) => r.samples.handoff?.p50 ?? NaN)
      const cells = [
        'hot key',
        fmtNumber(m.grantsPerSec),
        fmtNumber(m.requestsPerSec),
        fmtRatio(x),
        `hand-off ${fmtMs(m.handoffP50Ms)}`,
        fmtRatio(handoffX),
        `p99 ${fmtMs(m.handoffP99Ms)}`,
        '',
        fmtNumber(m.serverUsPerGrant),
      ]
      return { cells, figures: { median: roundAll(m), grantsRatioToSingle: x, handoffP50RatioToSingle: handoffX } }
    })
    return {
      columns: [
        'server',
        'conns',
        'flow',
        'cycles/s',
        'req/s',
        '× single',
        'p50 ms',
        '× single',
        'p99 ms',
        '× single',
        'server CPU µs/req',
      ],
      rows: [...uncontended.rows, ...hot.rows].map(([server = '', conns = '', ...rest]) => [server, conns, ...rest]),
      figures: { uncontended: uncontended.figures, hotKey: hot.figures },
      notes: [
        ...uncontended.notes,
        ...hot.notes,
        'Hot-key rows: cycles/s = grants/s; p50/p99 = hand-off; × single on req/s = grants/s ratio; CPU per grant.',
      ],
    }
  },
}

export default scenario
