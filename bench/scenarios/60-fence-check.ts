/**
 * Fence check latency: GET /locks/<key>/fence/<fence> (is this fence a live hold's?) next to inspect
 * (GET /locks/<key>), the read it is closest to, on one Redis and on a quorum of three. Each connection
 * takes a lock of its own once (ttl 1 h, in the warm-up) and then asks about its fence back to back;
 * every answer must say current. Ratios are check ÷ inspect in the same repetition.
 */
import { expectStatus, tokenHeaders } from '../lib/flows.js'
import type { Flow, FlowContext, LoadResult } from '../lib/load.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach } from '../lib/summary.js'

const CONNECTIONS = [16] as const

/** This connection's own held lock (taken on its first cycle): its path and fence. */
async function held(ctx: FlowContext): Promise<{ path: string; fence: number }> {
  let hold = ctx.state.held as { path: string; fence: number } | undefined
  if (!hold) {
    const path = `/locks/fc.${ctx.runId}.${ctx.conn}`
    const res = await ctx.request('acquire', 'POST', `${path}?ttl=1h`, { headers: tokenHeaders(ctx) })
    expectStatus('acquire', res.status, [201], res.body)
    ctx.state.held = hold = { path, fence: (JSON.parse(res.body.toString()) as { fence: number }).fence }
  }
  return hold
}

const checkFlow: Flow = async (ctx) => {
  const { path, fence } = await held(ctx)
  const res = await ctx.request('read', 'GET', `${path}/fence/${fence}`)
  expectStatus('fence check', res.status, [200], res.body)
  if (!(JSON.parse(res.body.toString()) as { current: boolean }).current) throw new Error(`fence ${fence} of ${path} not current`)
}

const inspectFlow: Flow = async (ctx) => {
  const { path } = await held(ctx)
  const res = await ctx.request('read', 'GET', path)
  expectStatus('inspect', res.status, [200], res.body)
}

const scenario: Scenario = {
  id: 'fence-check',
  title: 'Fence check latency (GET /locks/:key/fence/:fence) next to inspect',
  description:
    'Each connection holds a lock of its own (taken once, ttl 1 h) and asks back to back whether its fence is current ' +
    '(every answer must be); inspect (GET /locks/:key) of the same lock beside it. One Redis and a quorum of 3; × inspect = check ÷ inspect, same repetition.',
  async run(ctx) {
    const [one, three] = await Promise.all([ctx.service({ nodes: 1 }), ctx.service({ nodes: 3 })])
    const { rows, figures, notes } = await compareEach(
      ctx,
      {
        'check, 1 node': { server: one, flow: checkFlow },
        'inspect, 1 node': { server: one, flow: inspectFlow },
        'check, quorum of 3': { server: three, flow: checkFlow },
        'inspect, quorum of 3': { server: three, flow: inspectFlow },
      },
      { connections: CONNECTIONS, flow: checkFlow },
      (cmp, name) => {
        const reference = name.replace('check', 'inspect')
        const p = (q: 'p50' | 'p99') => (r: LoadResult) => r.labels.read?.latencyMs[q] ?? NaN
        const m = {
          requestsPerSec: cmp.median(name, (r) => r.labels.read?.perSec ?? 0),
          p50Ms: cmp.median(name, p('p50')),
          p99Ms: cmp.median(name, p('p99')),
          serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
          redisUsPerRequest: cmp.median(name, (r) => r.cpu.redisUsPerRequest),
          errors: cmp.errors(name),
        }
        const x = { p50: cmp.ratio(name, reference, p('p50')), p99: cmp.ratio(name, reference, p('p99')) }
        const cells = [
          fmtNumber(m.requestsPerSec),
          fmtMs(m.p50Ms),
          fmtRatio(x.p50),
          fmtMs(m.p99Ms),
          fmtRatio(x.p99),
          fmtNumber(m.serverUsPerRequest),
          fmtNumber(m.redisUsPerRequest),
        ]
        return { cells, figures: { median: roundAll(m), ratioToInspect: roundAll(x), runs: cmp.of(name) } }
      },
    )
    return {
      columns: ['read', 'conns', 'req/s', 'p50 ms', '× inspect', 'p99 ms', '× inspect', 'server CPU µs/req', 'Redis CPU µs/req'],
      rows,
      figures,
      notes,
    }
  },
}

export default scenario
