/**
 * Uncontended acquire + release on distinct keys (a new key every cycle), at 16 and 64 connections,
 * the service (one Redis) against the baseline, measured back to back in every repetition. A third
 * server, the "redis floor" (the baseline doing one Redis round trip per request and nothing else),
 * shows how much of the gap any Fastify + ioredis lock service pays on this machine.
 */
import { acquireRelease } from '../lib/flows.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { roundAll } from '../lib/stats.js'
import { ratioTarget, versus } from '../lib/summary.js'

export const CONNECTIONS = [16, 64] as const
export const TARGET_RATIO = 0.6

const scenario: Scenario = {
  id: 'uncontended',
  title: 'Uncontended acquire + release (distinct keys)',
  description:
    'Each connection loops POST /locks/:key (201) then DELETE /locks/:key (200) on a new key every cycle. ' +
    'Service on one Redis vs the baseline; ratios are ÷ baseline. "redis floor" = the baseline plus the one Redis round trip ' +
    'per request no lock service can avoid (a one-line Lua script via ioredis): the best a Fastify + ioredis service can do here.',
  async run(ctx) {
    const [baseline, floor, service] = await Promise.all([ctx.baseline(), ctx.redisFloor(), ctx.service({ nodes: 1 })])
    const names = ['baseline', 'redis floor', 'service']
    const rows: string[][] = []
    const figures: Record<string, unknown> = {}
    const targets: TargetCheck[] = []
    const notes: string[] = []
    for (const connections of CONNECTIONS) {
      const cmp = await ctx.compare(
        [
          { name: 'baseline', server: baseline },
          { name: 'redis floor', server: floor },
          { name: 'service', server: service },
        ],
        { connections, flow: acquireRelease },
      )
      notes.push(...cmp.errorNotes())
      const byName: Record<string, unknown> = {}
      for (const name of names) {
        const { median, ratio: x, cells } = versus(cmp, name, 'baseline')
        const m = { ...median, loaderUsPerRequest: cmp.median(name, (r) => r.cpu.loaderUsPerRequest) }
        rows.push([name, String(connections), ...cells])
        byName[name] = { median: roundAll(m), ratioToBaseline: roundAll(x), runs: cmp.of(name) }
        if (name === 'service') {
          targets.push(ratioTarget(`uncontended req/s vs baseline, ${connections} connections`, x.requestsPerSec, TARGET_RATIO, 'issue 7'))
        }
      }
      figures[`c${connections}`] = byName
    }
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

