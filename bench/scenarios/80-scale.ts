/**
 * Scale: what each tier costs per grant, so that a capacity plan can be computed from it
 * (docs/scaling.md). Five set-ups, measured back to back in every repetition:
 *
 * - R1: one service replica on one Redis; R2: two replicas on the same Redis (the load generator
 *   spreads its connections over them);
 * - C1: two replicas on a Redis Cluster of one master (all 16384 slots); C3: two replicas on a
 *   cluster of three masters;
 * - Q3: one replica on a Redlock quorum of three independent Redis (every grant on every node);
 *
 * each with three flows: uncontended acquire + release on a new key every cycle (many distinct keys:
 * in C3 they spread over the masters); one hot key with every client waiting in line (its hand-off
 * rate; in R2, C1 and C3 the waiters are spread over two replicas, so most hand-offs are a wake-up
 * push to the other replica; in C3 the push also crosses the cluster bus); and 8 hot keys with 4
 * waiters each (hand-offs of several keys at once: what N hot keys cost a master).
 *
 * Every process's CPU time over the measured window is read from /proc (lib/load.ts), so the figures
 * are service CPU µs per grant (all replicas), Redis CPU µs per grant (all masters, and each master).
 * All of it shares this machine's 2 cores with the load generator, so a throughput ratio cannot show
 * a second replica's or master's core: CPU per grant is the figure that carries over to real hosts.
 * Connections per replica and master are counted from /proc at the end (lib/tcp-connections.ts).
 */
import { acquireRelease, waitingCycle } from '../lib/flows.js'
import type { Comparison, RunSpec, Variant } from '../lib/context.js'
import type { LoadResult } from '../lib/load.js'
import { startRedisClusterNodes, type HttpServer, type RedisNode } from '../lib/processes.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, median, ratio, round } from '../lib/stats.js'
import { grantsPerSec } from '../lib/summary.js'
import { connectionsTo } from '../lib/tcp-connections.js'
import { hotKeyFlow } from './40-hot-key-wait.js'

const UNCONTENDED_CONNECTIONS = 64
const HOT_CONNECTIONS = 16
/** Many hot keys at once: HOT_KEYS keys, WAITERS_PER_KEY connections waiting in line on each. */
const HOT_KEYS = 8
const WAITERS_PER_KEY = 4
// Connections 4k … 4k + 3 wait on key k: spread over the replicas as connections are (c mod replicas).
const hotKeysFlow = waitingCycle((ctx) => `/locks/hot.${ctx.runId}.${Math.floor(ctx.conn / WAITERS_PER_KEY)}`, 'ttl=5s&wait=10s')
/** Each set-up's ratio is taken against this one (same repetition). */
const REFERENCE: Record<string, string> = { R2: 'R1', C1: 'R2', C3: 'C1', Q3: 'R1' }

const MANY = `${HOT_KEYS} hot keys` as const
type Flow = 'uncontended' | 'hot key' | typeof MANY
/** Every uncontended cycle is one grant; a hot-key cycle is one grant that waited in line. */
const grants = (flow: Flow) => (r: LoadResult) => (flow === 'uncontended' ? r.cyclesPerSec : grantsPerSec(r))

interface SetUp {
  variant: Variant
  replicas: HttpServer[]
  masters: RedisNode[]
}

const scenario: Scenario = {
  id: 'scale',
  title: 'Scale: service replicas 1 vs 2, cluster masters 1 vs 3, CPU per grant per tier',
  description:
    'R1 = one service replica on one Redis; R2 = two replicas on that Redis (connections spread over them); C1 / C3 = two replicas on a ' +
    'Redis Cluster of 1 / 3 masters; Q3 = one replica on a Redlock quorum of 3 Redis. Uncontended: POST + DELETE on a new key every cycle (one grant), ' +
    `${UNCONTENDED_CONNECTIONS} connections; hot key: ${HOT_CONNECTIONS} connections waiting in line on one key (p50 = hand-off); ` +
    `${HOT_KEYS} hot keys: ${WAITERS_PER_KEY} connections waiting on each of ${HOT_KEYS} keys. ` +
    '× ref = grants/s ÷ the reference set-up’s in the same repetition (R2 ÷ R1, C1 ÷ R2, C3 ÷ C1, Q3 ÷ R1). CPU from /proc over the measured window: ' +
    'service = all replicas; Redis = all masters (nodes); per master = each master, busiest first. All processes share 2 cores.',
  async run(ctx) {
    const single = await ctx.redisNodes(1)
    const a = await ctx.service({ nodes: 1 })
    const q = await ctx.service({ nodes: 3 })
    const b = await ctx.startServiceOn('service-n1-b', single)
    const [c1, c3] = [await startRedisClusterNodes(1), await startRedisClusterNodes(3)]
    const cluster = { REDIS_MODE: 'cluster' }
    const c1a = await ctx.startServiceOn('service-c1-a', c1, cluster)
    const c1b = await ctx.startServiceOn('service-c1-b', c1, cluster)
    const c3a = await ctx.startServiceOn('service-c3-a', c3, cluster)
    const c3b = await ctx.startServiceOn('service-c3-b', c3, cluster)
    const setUps: Record<string, SetUp> = {
      R1: { variant: { name: 'R1', server: a }, replicas: [a], masters: single },
      R2: { variant: { name: 'R2', server: a, replicas: [b] }, replicas: [a, b], masters: single },
      C1: { variant: { name: 'C1', server: c1a, replicas: [c1b] }, replicas: [c1a, c1b], masters: c1 },
      C3: { variant: { name: 'C3', server: c3a, replicas: [c3b] }, replicas: [c3a, c3b], masters: c3 },
      Q3: { variant: { name: 'Q3', server: q }, replicas: [q], masters: await ctx.redisNodes(3) },
    }
    const variants = Object.values(setUps).map((s) => s.variant)

    const rows: string[][] = []
    const figures: Record<string, unknown> = {}
    const notes: string[] = []
    const measured: Record<Flow, Record<string, PerGrant>> = { uncontended: {}, 'hot key': {}, [MANY]: {} }
    const runs: Record<string, Record<string, readonly LoadResult[]>> = {}
    const flows: [Flow, RunSpec][] = [
      ['uncontended', { connections: UNCONTENDED_CONNECTIONS, flow: acquireRelease }],
      ['hot key', { connections: HOT_CONNECTIONS, flow: hotKeyFlow, drainMs: 3000 }],
      [MANY, { connections: HOT_KEYS * WAITERS_PER_KEY, flow: hotKeysFlow, drainMs: 3000 }],
    ]
    for (const [flow, spec] of flows) {
      const cmp = await ctx.compare(variants, spec)
      notes.push(...cmp.errorNotes())
      runs[flow] = Object.fromEntries(cmp.runs)
      for (const [name, setUp] of Object.entries(setUps)) {
        const m = perGrant(cmp, name, setUp, flow)
        measured[flow][name] = m
        rows.push([
          name,
          flow,
          String(spec.connections),
          fmtNumber(m.grantsPerSec),
          REFERENCE[name] ? fmtRatio(m.ratioToReference) : '–',
          fmtMs(m.p50Ms),
          fmtNumber(m.serviceUsPerGrant),
          m.serviceCoresPerReplica.map((c) => c.toFixed(2)).join(' / '),
          fmtNumber(m.redisUsPerGrant),
          m.redisUsPerGrantPerMaster.map(fmtNumber).join(' / '),
          m.redisCoresPerMaster.map((c) => c.toFixed(2)).join(' / '),
          fmtNumber(m.loaderUsPerGrant),
          m.otherCores.toFixed(2),
        ])
      }
    }
    figures.perGrant = roundDeep(measured)
    figures.runs = runs

    const connections = Object.fromEntries(
      Object.entries(setUps).map(([name, s]) => [name, s.replicas.map((r) => connectionsPerMaster(r, s.masters))]),
    )
    figures.connectionsPerReplicaPerMaster = connections
    notes.push(
      'Connections each replica holds open to each master (counted from /proc after the runs): ' +
        Object.entries(connections)
          .filter(([name]) => name !== 'R1')
          .map(([name, perReplica]) => `${name} ${perReplica.map((masters) => masters.join('+')).join(', ')}`)
          .join('; ') +
        ' (per replica, masters in order).',
      ...summary(measured),
    )
    return {
      columns: [
        'set-up',
        'flow',
        'conns',
        'grants/s',
        '× ref',
        'p50 ms',
        'service CPU µs/grant',
        'service cores per replica',
        'Redis CPU µs/grant',
        'Redis µs/grant per master',
        'Redis cores per master',
        'loader µs/grant',
        'other cores',
      ],
      rows,
      figures,
      notes,
    }
  },
}

interface PerGrant {
  grantsPerSec: number
  ratioToReference: number
  /** Uncontended: request p50 and p99; hot keys: hand-off p50 and p99. */
  p50Ms: number
  p99Ms: number
  serviceUsPerGrant: number
  serviceCoresPerReplica: number[]
  redisUsPerGrant: number
  /** Busiest master first (in a hot-key run, the master that owns the key). */
  redisUsPerGrantPerMaster: number[]
  redisCoresPerMaster: number[]
  loaderUsPerGrant: number
  otherCores: number
}

/** Medians over the repetitions; per master, the median of each rank (busiest first in every run: a hot key's master first). */
function perGrant(cmp: Comparison, name: string, setUp: SetUp, flow: Flow): PerGrant {
  const runs = cmp.of(name)
  const rate = grants(flow)
  const us = (cores: number, r: LoadResult) => (cores * 1e6) / rate(r)
  const masterCores = runs.map((r) => setUp.masters.map((m) => r.cpu.processes[m.url] ?? NaN).sort((x, y) => y - x))
  const byRank = (pick: (cores: number, r: LoadResult) => number) =>
    setUp.masters.map((_, i) => median(runs.map((r, k) => pick(masterCores[k]?.[i] ?? NaN, r))))
  const reference = REFERENCE[name]
  return {
    grantsPerSec: cmp.median(name, rate),
    ratioToReference: reference ? cmp.ratio(name, reference, rate) : NaN,
    p50Ms: cmp.median(name, (r) => (flow === 'uncontended' ? r.latencyMs.p50 : (r.samples.handoff?.p50 ?? NaN))),
    p99Ms: cmp.median(name, (r) => (flow === 'uncontended' ? r.latencyMs.p99 : (r.samples.handoff?.p99 ?? NaN))),
    serviceUsPerGrant: cmp.median(name, (r) => us(r.cpu.serverCores, r)),
    serviceCoresPerReplica: setUp.replicas.map((s) => median(runs.map((r) => r.cpu.processes[s.name] ?? NaN))),
    redisUsPerGrant: cmp.median(name, (r) => us(r.cpu.redisCores, r)),
    redisUsPerGrantPerMaster: byRank(us),
    redisCoresPerMaster: byRank((cores) => cores),
    loaderUsPerGrant: cmp.median(name, (r) => us(r.cpu.loaderCores, r)),
    otherCores: cmp.median(name, (r) => r.cpu.otherCores),
  }
}

/** One replica's established connections to each of `masters`, in order. */
function connectionsPerMaster(replica: HttpServer, masters: readonly RedisNode[]): number[] {
  const ports = masters.map((m) => Number(new URL(m.url).port))
  const counts = connectionsTo(replica.proc.pid, ports)
  return ports.map((p) => counts.get(p) ?? 0)
}

/** The lines docs/scaling.md's model reads: each tier's cost per grant, and what grew or did not. */
function summary(m: Record<Flow, Record<string, PerGrant>>): string[] {
  const u = m.uncontended
  const h = m['hot key']
  const k = m[MANY]
  const f = (n: number | undefined) => fmtNumber(n ?? NaN)
  const x = (n: number | undefined) => fmtRatio(n ?? NaN)
  return [
    `Replicas (uncontended): R2 ÷ R1 grants/s ${x(u.R2?.ratioToReference)}; service CPU per grant ${f(u.R1?.serviceUsPerGrant)} → ` +
      `${f(u.R2?.serviceUsPerGrant)} µs (×${fmtNumber(ratio(u.R2?.serviceUsPerGrant ?? NaN, u.R1?.serviceUsPerGrant ?? NaN))}), ` +
      `Redis ${f(u.R1?.redisUsPerGrant)} → ${f(u.R2?.redisUsPerGrant)} µs.`,
    `Masters (uncontended, two replicas): C3 ÷ C1 grants/s ${x(u.C3?.ratioToReference)}; Redis CPU per grant, all masters ` +
      `${f(u.C1?.redisUsPerGrant)} → ${f(u.C3?.redisUsPerGrant)} µs, per master ${f(u.C1?.redisUsPerGrantPerMaster[0])} → ` +
      `${(u.C3?.redisUsPerGrantPerMaster ?? []).map(fmtNumber).join(' / ')} µs; service ${f(u.C1?.serviceUsPerGrant)} → ${f(u.C3?.serviceUsPerGrant)} µs.`,
    `Hot key: ${f(h.R1?.grantsPerSec)} grants/s on one replica, ${f(h.R2?.grantsPerSec)} on two (waiters spread: ${x(h.R2?.ratioToReference)}), ` +
      `${f(h.C1?.grantsPerSec)} on a 1-master cluster, ${f(h.C3?.grantsPerSec)} on 3 masters (${x(h.C3?.ratioToReference)}): one key, one master. ` +
      `Wake-up cost across replicas: service ${f(h.R1?.serviceUsPerGrant)} → ${f(h.R2?.serviceUsPerGrant)} µs/grant, Redis ` +
      `${f(h.R1?.redisUsPerGrant)} → ${f(h.R2?.redisUsPerGrant)} µs/grant; in C3 the masters that do not own the key pay ` +
      `${(h.C3?.redisUsPerGrantPerMaster.slice(1) ?? []).map(fmtNumber).join(' / ')} µs/grant (the cluster bus carrying each PUBLISH).`,
    `${MANY}: ${['R1', 'R2', 'C1', 'C3', 'Q3'].map((n) => `${n} ${f(k[n]?.grantsPerSec)}`).join(', ')} grants/s in all; Redis CPU per grant ` +
      `${['R1', 'C1', 'C3'].map((n) => `${n} ${f(k[n]?.redisUsPerGrant)}`).join(', ')} µs (one hot key: ${f(h.R1?.redisUsPerGrant)} µs on R1).`,
    `Quorum (uncontended): Q3 ÷ R1 grants/s ${x(u.Q3?.ratioToReference)}; Redis CPU per grant ${f(u.R1?.redisUsPerGrant)} → ` +
      `${f(u.Q3?.redisUsPerGrant)} µs (every node does the work: ${(u.Q3?.redisUsPerGrantPerMaster ?? []).map(fmtNumber).join(' / ')}); ` +
      `service ${f(u.R1?.serviceUsPerGrant)} → ${f(u.Q3?.serviceUsPerGrant)} µs.`,
  ]
}

function roundDeep(value: unknown): unknown {
  if (typeof value === 'number') return round(value)
  if (Array.isArray(value)) return value.map(roundDeep)
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundDeep(v)]))
  return value
}

export default scenario
