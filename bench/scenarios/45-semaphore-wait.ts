/**
 * One semaphore of limit 4 with 32 waiting clients, against one lock with 32 waiting clients, on the
 * same service in the same repetitions: every connection loops POST /semaphores/<hot>?limit=4&wait=…
 * (one permit, own token) → DELETE at once, or the hot-key lock cycle of 40-hot-key-wait.ts. Four hold
 * at once; each release hands its permit to the waiter at the head of the line (include/queue.lua).
 *
 * - grants/s and hand-off p50/p99 (a DELETE sent → the next 201, releases and grants paired first in,
 *   first out) for each, and the semaphore's as ratios (×) to the lock's of the same repetition;
 * - fairness: max ÷ min grants per connection.
 */
import { waitingCycle } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach, grantsPerSec, handoff, target, waitingMedians } from '../lib/summary.js'
import { hotKeyFlow } from './40-hot-key-wait.js'

const CONNECTIONS = [32] as const
const LIMIT = 4
const TTL = '5s'
const WAIT = '10s'
/** Targets: four holders at once turn over at least as fast as one; a hand-off within 2 ms (p50), as for locks. */
const TARGET_GRANTS_RATIO = 1
const TARGET_HANDOFF_P50_MS = 2

const semaphoreFlow = waitingCycle((ctx) => `/semaphores/hot.${ctx.runId}`, `limit=${LIMIT}&ttl=${TTL}&wait=${WAIT}`, LIMIT)

const scenario: Scenario = {
  id: 'semaphore-wait',
  title: `One semaphore of limit ${LIMIT}, every client waiting in line, against one hot lock`,
  description:
    `Each connection loops POST /semaphores/<one key>?limit=${LIMIT}&ttl=${TTL}&wait=${WAIT} (one permit, own token) → release at once (DELETE), ` +
    'against the hot-key lock cycle (POST /locks/<one key>?wait=… → DELETE) on the same service (one Redis), alternating in each repetition. ' +
    'Hand-off = a DELETE sent → the next 201 on any connection (releases and grants paired first in, first out). × lock = semaphore ÷ lock, same repetition.',
  async run(ctx) {
    const service = await ctx.service({ nodes: 1 })
    const targets: TargetCheck[] = []
    const servers = { lock: { server: service, flow: hotKeyFlow }, semaphore: { server: service, flow: semaphoreFlow } }
    const { rows, figures, notes } = await compareEach(
      ctx,
      servers,
      { connections: CONNECTIONS, flow: hotKeyFlow, drainMs: 3000 },
      (cmp, name, connections) => {
        const { median: m, fair, fairness } = waitingMedians(cmp, name)
        const x = {
          grantsPerSec: cmp.ratio(name, 'lock', grantsPerSec),
          handoffP50: cmp.ratio(name, 'lock', handoff('p50')),
          handoffP99: cmp.ratio(name, 'lock', handoff('p99')),
        }
        if (name === 'semaphore') {
          targets.push(
            target(
              `semaphore of limit ${LIMIT}: grants/s ÷ the hot lock's, ${connections} waiting clients`,
              x.grantsPerSec,
              fmtRatio(x.grantsPerSec),
              '≥',
              TARGET_GRANTS_RATIO,
              '×',
            ),
          )
          targets.push(
            target(
              `semaphore of limit ${LIMIT}: hand-off p50, ${connections} waiting clients`,
              m.handoffP50Ms,
              `${fmtMs(m.handoffP50Ms)} ms`,
              '≤',
              TARGET_HANDOFF_P50_MS,
              ' ms',
            ),
          )
        }
        const cells = [
          fmtNumber(m.grantsPerSec),
          fmtRatio(x.grantsPerSec),
          fmtMs(m.handoffP50Ms),
          fmtRatio(x.handoffP50),
          fmtMs(m.handoffP99Ms),
          fmtRatio(x.handoffP99),
          fmtMs(m.acquireP50Ms),
          fmtMs(m.acquireP99Ms),
          fairness,
          String(m.timeouts),
          fmtNumber(m.serverUsPerGrant),
          fmtNumber(m.redisUsPerGrant),
        ]
        return { cells, figures: { median: roundAll(m), ratioToLock: roundAll(x), perRepetition: fair, runs: cmp.of(name) } }
      },
    )
    return {
      columns: [
        'cycle',
        'conns',
        'grants/s',
        '× lock',
        'hand-off p50 ms',
        '× lock',
        'hand-off p99 ms',
        '× lock',
        'acquire p50 ms',
        'acquire p99 ms',
        'max ÷ min',
        'timeouts',
        'server CPU µs/grant',
        'Redis CPU µs/grant',
      ],
      rows,
      figures,
      targets,
      notes: [
        ...notes,
        `"lock" is the hot-key cycle of hot-key-wait at ${CONNECTIONS.join('/')} connections; "semaphore" holds ${LIMIT} at once, one permit each.`,
      ],
    }
  },
}

export default scenario
