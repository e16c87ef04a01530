/**
 * Resident memory (VmRSS from /proc/<pid>/status) of a fresh service process, next to a fresh
 * baseline process (the Node + Fastify floor on this machine):
 *
 * - "3 s after start": RSS 3 s after /readyz first answered — startup garbage still in the heap;
 * - "idle": RSS after 20 s without requests. V8's memory reducer gives back the startup garbage
 *   about 8 s after the last burst of allocation (later when the machine is busy), so this is the
 *   steady state of an idle replica (and what the ≤ 80 MiB target is checked against);
 * - "1 s after load" and "idle after load": the same after a load run (uncontended acquire +
 *   release, 64 connections); peak = VmHWM over the process' life.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { errorNotes } from '../lib/context.js'
import { acquireRelease } from '../lib/flows.js'
import type { HttpServer } from '../lib/processes.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtNumber, fmtRatio, round } from '../lib/stats.js'

const EARLY_MS = 3000
/** V8's memory reducer usually runs ~8 s after the last allocation burst; later on a busy machine. */
const SETTLE_MS = 20_000
const TARGET_IDLE_MIB = 80

const scenario: Scenario = {
  id: 'memory',
  title: 'Resident memory of one service process',
  description:
    `VmRSS of fresh processes (MiB): ${EARLY_MS / 1000} s after /readyz answered, idle (after ${SETTLE_MS / 1000} s without requests: V8's memory reducer has run), ` +
    `1 s after a load run (uncontended, 64 connections) and idle again ${SETTLE_MS / 1000} s after it; peak = VmHWM. ` +
    'The baseline is the Node + Fastify floor.',
  async run(ctx) {
    const [service, baseline] = await Promise.all([ctx.startService({ nodes: 1, name: 'service-memory' }), ctx.startBaseline('baseline-memory')])
    try {
      const rss = (s: HttpServer) => s.proc.memory().rssMb
      await sleep(EARLY_MS)
      const early = { service: rss(service), baseline: rss(baseline) }
      await sleep(SETTLE_MS - EARLY_MS)
      const idle = { service: rss(service), baseline: rss(baseline) }
      const serviceLoad = await ctx.load(service, { connections: 64, flow: acquireRelease })
      const baselineLoad = await ctx.load(baseline, { connections: 64, flow: acquireRelease })
      await sleep(1000)
      const afterLoad = { service: rss(service), baseline: rss(baseline) }
      await sleep(SETTLE_MS - 1000)
      const idleAfterLoad = { service: rss(service), baseline: rss(baseline) }
      const peak = { service: service.proc.memory().peakRssMb, baseline: baseline.proc.memory().peakRssMb }
      const names = ['service', 'baseline'] as const
      const rows = names.map((name) => [
        name,
        fmtNumber(early[name]),
        fmtNumber(idle[name]),
        name === 'service' ? fmtRatio(idle.service / idle.baseline) : fmtRatio(1),
        fmtNumber(afterLoad[name]),
        fmtNumber(idleAfterLoad[name]),
        fmtNumber(peak[name]),
      ])
      const figures = (name: (typeof names)[number], load: unknown) => ({
        rssMiB3sAfterStart: round(early[name]),
        idleRssMiB: round(idle[name]),
        rssMiB1sAfterLoad: round(afterLoad[name]),
        idleRssMiBAfterLoad: round(idleAfterLoad[name]),
        peakRssMiB: round(peak[name]),
        load,
      })
      return {
        columns: [`process`, `${EARLY_MS / 1000} s after start`, 'idle', 'idle × base', '1 s after load', 'idle after load', 'peak'],
        rows,
        notes: [...errorNotes('service', [serviceLoad]), ...errorNotes('baseline', [baselineLoad])],
        figures: { earlyMs: EARLY_MS, settleMs: SETTLE_MS, service: figures('service', serviceLoad), baseline: figures('baseline', baselineLoad) },
        targets: [
          {
            name: 'idle RSS of the service',
            value: idle.service,
            shown: `${fmtNumber(idle.service)} MiB`,
            goal: `≤ ${TARGET_IDLE_MIB} MiB`,
            pass: idle.service <= TARGET_IDLE_MIB,
            source: 'issue 7',
          },
        ],
      }
    } finally {
      await Promise.all([service.proc.stop(), baseline.proc.stop()])
    }
  },
}

export default scenario
