/**
 * The service against etcd's lock API, side by side from the same load generator, with both clients
 * (`raw` and `node-http`, whatever the run's `--client`): one etcd member (Debian's etcd-server,
 * `--unsafe-no-fsync`, installed by `npm run bench` when missing) spoken to through its v3 HTTP
 * gateway, and the service on one Redis.
 *
 * - uncontended: a new lock name every cycle. etcd: POST /v3/lock/lock {name, lease} → its key, then
 *   POST /v3/lock/unlock {key}; the service: POST /locks/:key → DELETE /locks/:key.
 * - hot key: every connection waits in line on one name. etcd's lock call blocks until the lock is
 *   its own; the service parks the request (`?wait=`). Each grant is released at once.
 *
 * etcd's locks hang on a lease: each connection grants itself one lease (TTL 60 s) on its first cycle,
 * in the warm-up, and locks with it from then on, as etcd's own concurrency session does. That is
 * etcd at its cheapest (two requests a cycle, like the service): a lease per hold, the service's
 * per-hold TTL, would add a grant and a revoke to every cycle.
 *
 * Both cycles also run on the redis floor (the baseline doing one Redis round trip per request and
 * nothing else; on the hot key, a line in Redis that a release hands the key on from), as a
 * reference: what any Fastify + Redis service could reach against etcd from the same client on the
 * same cores. It has no target of its own.
 */
import { acquireRelease, expectStatus } from '../lib/flows.js'
import type { Flow, FlowContext } from '../lib/load.js'
import type { Comparison } from '../lib/context.js'
import { clientKinds } from '../lib/http-client.js'
import { hasEtcd, startEtcd } from '../lib/processes.js'
import type { Scenario, TargetCheck } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { grantsPerSec, target } from '../lib/summary.js'
import { hotKeyFlow } from './40-hot-key-wait.js'

const UNCONTENDED_CONNECTIONS = [16, 64] as const
const HOT_KEY_CONNECTIONS = 16
const LEASE_TTL_S = 60
/** Targets: the service's cycles/s ÷ etcd's, same run, same client. */
const TARGET_UNCONTENDED = 3
const TARGET_HOT_KEY = 20

/** The reference server (no target). */
const FLOOR = 'redis floor'

const base64 = (text: string) => Buffer.from(text).toString('base64')

/** The connection's lease, granted on its first cycle. */
async function lease(ctx: FlowContext): Promise<string> {
  const held = ctx.state.lease as string | undefined
  if (held) return held
  const res = await ctx.request('lease', 'POST', '/v3/lease/grant', { json: { TTL: LEASE_TTL_S } })
  expectStatus('lease', res.status, [200], res.body)
  const id = (JSON.parse(res.body.toString('utf8')) as { ID?: string }).ID
  if (!id) throw new Error(`lease grant: no ID in ${res.body.toString('utf8', 0, 200)}`)
  ctx.state.lease = id
  return id
}

/** Lock `name(ctx)` with the connection's lease (blocking while another holds it), then unlock. */
function etcdCycle(name: (ctx: FlowContext) => string, waiting: boolean): Flow {
  return async (ctx) => {
    const leaseId = await lease(ctx)
    const locked = await ctx.request('acquire', 'POST', '/v3/lock/lock', { json: { name: base64(name(ctx)), lease: leaseId } })
    expectStatus('acquire', locked.status, [200], locked.body)
    const key = (JSON.parse(locked.body.toString('utf8')) as { key?: string }).key
    if (!key) throw new Error(`lock: no key in ${locked.body.toString('utf8', 0, 200)}`)
    if (waiting) ctx.count('granted')
    const unlocked = await ctx.request('release', 'POST', '/v3/lock/unlock', { json: { key } })
    expectStatus('release', unlocked.status, [200], unlocked.body)
  }
}

const etcdUncontended = etcdCycle((ctx) => `u.${ctx.runId}.${ctx.conn}.${ctx.iter}`, false)
const etcdHotKey = etcdCycle((ctx) => `hot.${ctx.runId}`, true)

/** CPU µs per cycle: the server process and its Redis nodes (none for etcd). */
const cpuUsPerCycle = (cmp: Comparison, name: string) =>
  cmp.median(name, (r) => ((r.cpu.serverCores + r.cpu.redisCores) * 1e6) / r.cyclesPerSec)

const scenario: Scenario = {
  id: 'etcd',
  title: "The service against etcd's lock API (both clients)",
  description:
    "etcd 3.4 (Debian's etcd-server, one member, --unsafe-no-fsync) through its v3 HTTP gateway: POST /v3/lock/lock with the " +
    "connection's lease (granted once, as etcd's concurrency session does) then /v3/lock/unlock, against the service's POST + " +
    'DELETE /locks/:key on one Redis; uncontended (a new name every cycle) and one hot key with every client waiting. Both load ' +
    'generator clients, whatever --client says; × etcd = ÷ etcd, same repetition and client. CPU per cycle = the server ' +
    "process's plus its Redis'. Both cycles also run on the redis floor (the baseline doing one Redis round trip per " +
    'request; on the hot key a line in Redis, the key handed on by the release), for reference: no target.',
  async run(ctx) {
    if (!hasEtcd()) {
      const missing = target('etcd: etcd-server installed', 0, 'missing', '≥', 1)
      return {
        columns: ['note'],
        rows: [["etcd is not installed (Debian's etcd-server; npm run bench installs it): nothing measured"]],
        figures: {},
        targets: [missing],
      }
    }
    const [service, floor, etcd] = await Promise.all([ctx.service({ nodes: 1 }), ctx.redisFloor(), startEtcd()])
    const rows: string[][] = []
    const figures: Record<string, unknown> = {}
    const targets: TargetCheck[] = []
    const notes: string[] = []
    try {
      for (const client of clientKinds) {
        const cases = [
          ...UNCONTENDED_CONNECTIONS.map((connections) => ({ what: 'uncontended', connections, flows: [acquireRelease, etcdUncontended] })),
          { what: 'hot key', connections: HOT_KEY_CONNECTIONS, flows: [hotKeyFlow, etcdHotKey] },
        ]
        for (const { what, connections, flows } of cases) {
          const [serviceFlow, etcdFlow] = flows as [Flow, Flow]
          const hot = what === 'hot key'
          const servers = [
            { name: 'service', server: service, flow: serviceFlow },
            { name: FLOOR, server: floor, flow: serviceFlow },
            { name: 'etcd', server: etcd, flow: etcdFlow },
          ]
          const cmp = await ctx.compare(servers, { connections, flow: serviceFlow, client, ...(hot ? { drainMs: 3000 } : {}) })
          notes.push(...cmp.errorNotes())
          const perSec = hot ? grantsPerSec : (r: { cyclesPerSec: number }) => r.cyclesPerSec
          const toEtcd = cmp.ratio('service', 'etcd', perSec)
          targets.push(
            target(
              `${what} cycles/s vs etcd, ${connections} connections, client ${client}`,
              toEtcd,
              fmtRatio(toEtcd),
              '≥',
              hot ? TARGET_HOT_KEY : TARGET_UNCONTENDED,
              '×',
            ),
          )
          const byName: Record<string, unknown> = {}
          for (const { name } of servers) {
            const m = {
              cyclesPerSec: cmp.median(name, perSec),
              p50Ms: cmp.median(name, (r) => r.labels.acquire?.latencyMs.p50 ?? NaN),
              p99Ms: cmp.median(name, (r) => r.labels.acquire?.latencyMs.p99 ?? NaN),
              cpuUsPerCycle: cpuUsPerCycle(cmp, name),
            }
            const ratio = name === 'etcd' ? 1 : cmp.ratio(name, 'etcd', perSec)
            rows.push([
              name,
              client,
              what,
              String(connections),
              fmtNumber(m.cyclesPerSec),
              fmtRatio(ratio),
              fmtMs(m.p50Ms),
              fmtMs(m.p99Ms),
              fmtNumber(m.cpuUsPerCycle),
            ])
            byName[name] = { median: roundAll(m), ratioToEtcd: ratio, runs: cmp.of(name) }
          }
          figures[`${client}.${hot ? 'hot' : 'uncontended'}.c${connections}`] = byName
        }
      }
    } finally {
      await etcd.proc.stop()
    }
    return {
      columns: ['server', 'client', 'cycle', 'conns', 'cycles/s', '× etcd', 'acquire p50 ms', 'acquire p99 ms', 'CPU µs/cycle'],
      rows,
      figures,
      targets,
      notes: [
        ...notes,
        'A hot-key cycle is one grant; "acquire" includes the time in line. etcd runs on the same 2 cores as the service and its Redis.',
        '"redis floor" (no target): the baseline doing one Redis round trip per request and nothing else (on the hot key: a ' +
          'waiting POST joins a line in Redis, a release hands the key to its head and answers that request), the same cycle ' +
          'from the same client: what a Fastify + Redis service doing no other lock work would reach against etcd here.',
      ],
    }
  },
}

export default scenario
