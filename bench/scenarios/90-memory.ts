/**
 * Resident memory (VmRSS from /proc/<pid>/status) of a fresh service process, next to a fresh
 * baseline process (the Node + Fastify floor on this machine):
 *
 * - "3 s after start": RSS 3 s after /readyz first answered — startup garbage still in the heap;
 * - "idle": the lowest RSS sampled once a second 10–30 s after start, without requests. V8's memory
 *   reducer gives back the startup garbage about 8 s after the last burst of allocation (later when
 *   the machine is busy: one sample at 20 s missed it in one run of four), so this is the steady
 *   state of an idle replica (and what the ≤ 80 MiB target is checked against);
 * - "1 s after load" and "idle after load": the same after a load run (uncontended acquire +
 *   release, 64 connections); peak = VmHWM over the process' life.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { errorNotes } from '../lib/context.js'
import { acquireRelease } from '../lib/flows.js'
import { lowestRss, type HttpServer } from '../lib/processes.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtNumber, fmtRatio, round } from '../lib/stats.js'
import { target } from '../lib/summary.js'

const EARLY_MS = 3000
/** V8's memory reducer usually runs ~8 s after the last allocation burst; later on a busy machine. */
const SETTLE_MS = 20_000
/** Idle = the lowest RSS sampled once a second from IDLE_FROM_MS to IDLE_UNTIL_MS after start. */
const IDLE_FROM_MS = 10_000
const IDLE_UNTIL_MS = 30_000
const TARGET_IDLE_MIB = 80

const scenario: Scenario = {
  id: 'memory',
  title: 'Resident memory of one service process',
  description:
    `VmRSS of fresh processes (MiB): ${EARLY_MS / 1000} s after /readyz answered, idle (lowest of the samples once a second ${IDLE_FROM_MS / 1000}–${IDLE_UNTIL_MS / 1000} s after start, without requests: V8's memory reducer has run), ` +
    `1 s after a load run (uncontended, 64 connections) and idle again (lowest ${IDLE_FROM_MS / 1000}–${SETTLE_MS / 1000} s after it); peak = VmHWM. ` +
    'The baseline is the Node + Fastify floor.',
  async run(ctx) {
    const [service, baseline] = await Promise.all([
      ctx.startService({ nodes: 1, name: 'service-memory' }),
      ctx.startBaseline('baseline-memory'),
    ])
    try {
      const rss = (s: HttpServer) => s.proc.memory().rssMb
      const lowest = async (forMs: number) => {
        const [s, b] = (await lowestRss([service, baseline], forMs)) as [number, number]
        return { service: s, baseline: b }
      }
      await sleep(EARLY_MS)
      const early = { service: rss(service), baseline: rss(baseline) }
      await sleep(IDLE_FROM_MS - EARLY_MS)
      const idle = await lowest(IDLE_UNTIL_MS - IDLE_FROM_MS)
      const serviceLoad = await ctx.load(service, { connections: 64, flow: acquireRelease })
      const baselineLoad = await ctx.load(baseline, { connections: 64, flow: acquireRelease })
      await sleep(1000)
      const afterLoad = { service: rss(service), baseline: rss(baseline) }
      await sleep(IDLE_FROM_MS - 1000)
      const idleAfterLoad = await lowest(SETTLE_MS - IDLE_FROM_MS)
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
        figures: {
          earlyMs: EARLY_MS,
          settleMs: SETTLE_MS,
          service: figures('service', serviceLoad),
          baseline: figures('baseline', baselineLoad),
        },
        targets: [target('idle RSS of the service', idle.service, `${fmtNumber(idle.service)} MiB`, '≤', TARGET_IDLE_MIB, ' MiB')],
      }
    } finally {
      await Promise.all([service.proc.stop(), baseline.proc.stop()])
    }
  },
}

export default scenario
