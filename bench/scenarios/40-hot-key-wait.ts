/**
 * One hot key with waiting clients: every connection loops POST /locks/<hot>?ttl=5s&wait=10s
 * with its own token, holds the grant for ~0 ms and DELETEs it, at 16 and at 64 connections. The
 * service parks all but one of them in line; each release script hands the lock to the head waiter
 * and pushes it the grant.
 *
 * - grants/s: 201s per second on the one key (every cycle is one grant: POST + DELETE);
 * - hand-off: measured in this process as the time from a DELETE being sent to the next 201 received
 *   on any connection (one shared "last release sent at" per run). It includes the release's trip to
 *   the service, the release script (which hands the lock over), the push to the waiter's replica
 *   and the grant's trip back, but not the DELETE's own answer;
 * - fairness: grants per connection over the measured window, fewest and most, and max ÷ min.
 *
 * The baseline runs the same flow. It grants every POST at once (no exclusion), so for it this is
 * the uncontended acquire + release: its grants/s is this machine's HTTP ceiling for the cycle, and
 * "× base" is service ÷ baseline in the same repetition. Hand-off means nothing there (its holds
 * overlap), so it is not shown for it. The service's holds (N = 1 and N = 3) are checked for safety
 * (lib/history.ts): a target each.
 */
import { waitingCycle } from '../lib/flows.js'
import type { LoadResult } from '../lib/load.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, median, roundAll } from '../lib/stats.js'
import { compareEach, grantsPerSec, historyTarget, target, waitingMedians } from '../lib/summary.js'
import { HoldHistory } from '../lib/history.js'

const CONNECTIONS = [16, 64] as const
const TTL = '5s'
const WAIT = '10s'
/** Targets: a hand-off within 2 ms (p50), 1,000 grants/s on one key with 16 clients, no client served 1.5× more than another. */
const TARGET_HANDOFF_P50_MS = 2
const TARGET_GRANTS_PER_SEC_16 = 1000
const TARGET_FAIRNESS = 1.5

/** The hot-key cycle: every connection waits in line on one lock (the semaphore scenario measures against it too). */
export const hotKeyFlow = waitingCycle((ctx) => `/locks/hot.${ctx.runId}`, `ttl=${TTL}&wait=${WAIT}`)
/** The same cycle, its holds recorded for the safety check. */
const checkedFlow = (log: HoldHistory) =>
  waitingCycle((ctx) => `/locks/hot.${ctx.runId}`, `ttl=${TTL}&wait=${WAIT}`, 1, { log, kind: { mode: 'exclusive' } })

const scenario: Scenario = {
  id: 'hot-key-wait',
  title: 'One hot key, every client waiting in line',
  description:
    `Each connection loops POST /locks/<one key>?ttl=${TTL}&wait=${WAIT} (own token) → release at once (DELETE). ` +
    'Hand-off = a DELETE sent → the next 201 on any connection, measured by the load generator. ' +
    'Fairness = fewest and most grants per connection in the measured window, and max ÷ min. ' +
    'The baseline runs the same flow but grants every POST at once (for it this is the uncontended cycle); × base = service ÷ baseline, same repetition. ' +
    '"service N=3": the same service on a quorum of 3 redis-servers (each hand-off is the release on every node; the waiter answers once a majority handed over). The targets are checked on one Redis.',
  async run(ctx) {
    const [baseline, service, quorum] = await Promise.all([ctx.baseline(), ctx.service({ nodes: 1 }), ctx.service({ nodes: 3 })])
    const targets: TargetCheck[] = []
    const histories = { service: new HoldHistory(), 'service N=3': new HoldHistory() }
    // A connection still parked when the window ends gets its turn within ~64 hand-offs.
    const { rows, figures, notes } = await compareEach(
      ctx,
      {
        baseline,
        service: { server: service, flow: checkedFlow(histories.service) },
        'service N=3': { server: quorum, flow: checkedFlow(histories['service N=3']) },
      },
      { connections: CONNECTIONS, flow: hotKeyFlow, drainMs: 3000 },
      (cmp, name, connections) => {
        // The baseline's holds overlap: hand-off means nothing there.
        const { median: m, fair, fairness } = waitingMedians(cmp, name, name !== 'baseline')
        const x = {
          grantsPerSec: cmp.ratio(name, 'baseline', grantsPerSec),
          requestsPerSec: cmp.ratio(name, 'baseline', (r) => r.requestsPerSec),
          // The same grants/s over the baseline's requests/s (two per cycle): half the ratio above.
          grantsPerSecToBaselineRequestsPerSec: median(
            cmp.of(name).map((r, i) => grantsPerSec(r) / (cmp.of('baseline')[i] as LoadResult).requestsPerSec),
          ),
        }
        if (name === 'service') {
          targets.push(
            target(
              `hot key: hand-off p50, ${connections} waiting clients`,
              m.handoffP50Ms,
              `${fmtMs(m.handoffP50Ms)} ms`,
              '≤',
              TARGET_HANDOFF_P50_MS,
              ' ms',
            ),
          )
          if (connections === 16) {
            const shown = `${fmtNumber(m.grantsPerSec)}/s (${fmtRatio(x.grantsPerSec)} base)`
            targets.push(
              target('hot key: grants/s on one key, 16 waiting clients', m.grantsPerSec, shown, '≥', TARGET_GRANTS_PER_SEC_16, '/s'),
            )
          }
          targets.push(
            target(`hot key: max ÷ min grants per client, ${connections} waiting clients`, m.fairness, fairness, '≤', TARGET_FAIRNESS),
          )
        }
        const cells = [
          fmtNumber(m.grantsPerSec),
          fmtRatio(x.grantsPerSec),
          fmtMs(m.handoffP50Ms),
          fmtMs(m.handoffP99Ms),
          fmtMs(m.acquireP50Ms),
          fmtMs(m.acquireP99Ms),
          fmtNumber(m.fewestGrants),
          fmtNumber(m.mostGrants),
          fairness,
          String(m.timeouts),
          fmtNumber(m.serverUsPerGrant),
        ]
        return { cells, figures: { median: roundAll(m), ratioToBaseline: roundAll(x), perRepetition: fair, runs: cmp.of(name) } }
      },
    )
    const checked = Object.entries(histories).map(([name, history]) => historyTarget(`hot key, ${name}`, history))
    targets.push(...checked.map((c) => c.target))
    return {
      columns: [
        'server',
        'conns',
        'grants/s',
        '× base',
        'hand-off p50 ms',
        'hand-off p99 ms',
        'acquire p50 ms',
        'acquire p99 ms',
        'fewest/conn',
        'most/conn',
        'max ÷ min',
        'timeouts',
        'server CPU µs/grant',
      ],
      rows,
      figures,
      targets,
      notes: [
        ...notes,
        ...checked.map((c) => c.note),
        '"acquire" is the POST with its time in line; per-connection grant counts are medians over the repetitions, max ÷ min is the median of the per-repetition ratios.',
      ],
    }
  },
}

export default scenario
