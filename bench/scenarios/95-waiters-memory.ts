/**
 * Resident memory of one service replica with 10,000 parked waiters (target: ≤ 1.2× the RSS of a bare Fastify
 * process holding as many parked requests).
 *
 * Fresh service processes (MAX_WAITERS=20000, so neither the per-replica nor the per-key cap stops
 * 10,000) and a fresh baseline process:
 *
 * 1. idle: the lowest VmRSS 15–25 s after start, without requests (as in the memory scenario: once
 *    V8's memory reducer has given back the start-up garbage);
 * 2. parked: a holder takes each lock key with a long TTL, then N connections (one socket each) POST
 *    /locks/<key>?wait=60s and stay parked; once GET /locks/<key> shows them all waiting (sum of
 *    `waiters`), VmRSS is read, and again 5 s later (leases renewed ~5 times meanwhile; the server's
 *    and Redis' CPU over those 5 s is the cost of keeping them parked);
 * 3. drain: the holds are force-released (DELETE ?force=true) and every waiter, once granted,
 *    releases at once, so the line empties one grant at a time; then the connections close.
 *
 * Two layouts, each on its own fresh process: 100 keys × 100 waiters, and one key × 10,000 (the
 * per-key structures at their largest). The baseline row is the Node + Fastify floor for the same
 * number of open connections: N keep-alive sockets that each had one request answered.
 *
 * N is 10,000 unless the open-file limit (`ulimit -n`) of this process or of the service cannot hold
 * that many sockets; then N is the largest count that fits, and the table also shows the figure
 * scaled linearly to 10,000 (idle + N × the measured cost per waiter).
 */
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { randomToken } from '../lib/flows.js'
import { connect, type HttpConnection } from '../lib/http-client.js'
import { lowestRss, type HttpServer } from '../lib/processes.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtNumber, round } from '../lib/stats.js'
import { target } from '../lib/summary.js'

const WANTED = 10_000
/** How many lock keys the waiters spread over (round-robin). */
const LAYOUTS = [100, 1] as const
const SETTLE_MS = 25_000
const IDLE_WINDOW_MS = 10_000
const PARKED_FOR_MS = 5_000
const WAIT = '60s'
/** File descriptors kept free for everything else a process has open (Redis, pipes, files). */
const FD_RESERVE = 256
/**
 * Waiters are opened BATCH at a time, and a new batch only once at most IN_FLIGHT of those sent are
 * not yet parked (in line in Redis) or answered: an arrival burst of 10,000 saturates the service's
 * one thread (all at once: event-loop lag up to 0.65 s, Redis calls 63 ms on average as the service
 * times them), and near its 500 ms NODE_TIMEOUT_MS it answers 503. This measures memory, not bursts.
 */
const BATCH = 250
const IN_FLIGHT = 750
/** RSS with 10,000 parked waiters ÷ the parked baseline's with as many parked requests. */
const TARGET_RATIO = 1.2

interface Waiting {
  /** POST status (0 = no answer), then the release's. */
  acquire: number
  release: number
  error?: string
}

/** Soft limit on open files of a process (/proc/<pid>/limits), Infinity when unlimited. */
function openFileLimit(pid: number | 'self'): number {
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8')
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1]
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft)
}

async function expectOk(
  conn: HttpConnection,
  method: string,
  path: string,
  wanted: number,
  headers?: Record<string, string>,
): Promise<string> {
  const res = await conn.request(method, path, headers ? { headers } : undefined)
  const text = res.body.toString('utf8')
  if (res.status !== wanted) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 200)}`)
  return text
}

/** Waiters whose request has been answered (or failed) already. */
function answered(waiting: readonly Waiting[]): number {
  let n = 0
  for (const w of waiting) if (w.acquire !== 0 || w.error !== undefined) n++
  return n
}

/**
 * Opens `count` connections to `server` (onto `conns`), each sending one request (`send`), BATCH at a
 * time: after each batch, `pace(opened)` holds back the next. Resolves with the requests' promises.
 */
async function openEach(
  server: HttpServer,
  count: number,
  conns: HttpConnection[],
  send: (conn: HttpConnection, i: number) => Promise<void>,
  pace: (opened: number) => Promise<unknown>,
): Promise<Promise<void>[]> {
  const sent: Promise<void>[] = []
  for (let i = 0; i < count; i++) {
    const conn = connect('raw', server.host, server.port)
    conns.push(conn)
    sent.push(send(conn, i))
    if ((i + 1) % BATCH === 0 || i + 1 === count) await pace(i + 1)
  }
  return sent
}

/**
 * Parks `count` requests (`send`) on connections of their own (onto `conns`): a batch is opened only
 * once at most IN_FLIGHT of those sent are neither in line (`inLine()`) nor answered (`answeredNow()`);
 * then polls until all are (30 s at most). Resolves with the requests' promises and how many are in line.
 */
async function park(
  server: HttpServer,
  count: number,
  conns: HttpConnection[],
  send: (conn: HttpConnection, i: number) => Promise<void>,
  inLine: () => Promise<number>,
  answeredNow: () => number,
): Promise<{ sent: Promise<void>[]; parked: number }> {
  const sent = await openEach(server, count, conns, send, async (opened) => {
    while (opened - (await inLine()) - answeredNow() > IN_FLIGHT) await sleep(20)
  })
  let parked: number
  const deadline = performance.now() + 30_000
  for (;;) {
    parked = await inLine()
    if (parked + answeredNow() >= count || performance.now() >= deadline) break
    await sleep(100)
  }
  return { sent, parked }
}

/** POST with a token of its own; counts a failure unless answered 201. */
function postCountingFailures(path: (i: number) => string, failures: { failed: number }) {
  return (conn: HttpConnection, i: number) =>
    conn.request('POST', path(i), { headers: { 'lock-token': randomToken() } }).then(
      (r) => void (r.status !== 201 && failures.failed++),
      () => void failures.failed++,
    )
}

/** What `n` held connections or requests cost over idle, extrapolated to WANTED when fewer. */
function scaledTo10k(idleMiB: number, rssMiB: number, n: number): number {
  return idleMiB + (rssMiB - idleMiB) * (WANTED / n)
}

/** Sum of `waiters` over the keys, by GET /locks/<key> on one keep-alive connection. */
async function waitersOn(control: HttpConnection, keys: readonly string[]): Promise<number> {
  let sum = 0
  for (const key of keys) sum += (JSON.parse(await expectOk(control, 'GET', `/locks/${key}`, 200)) as { waiters: number }).waiters
  return sum
}

interface LayoutResult {
  layout: string
  keys: number
  /** How many were in line at once (all of them unless some were refused while parking). */
  waiters: number
  refusedWhileParking: number
  idleRssMiB: number
  parkedRssMiB: number
  parkedLaterRssMiB: number
  peakRssMiB: number
  drainedRssMiB: number
  kibPerWaiter: number
  scaledTo10kMiB: number
  parkSeconds: number
  parkedServerCores: number
  parkedRedisCores: number
  drainSeconds: number
  drainGrantsPerSec: number
  granted: number
  failed: number
  failures: string[]
}

async function measureLayout(
  server: HttpServer,
  nKeys: number,
  count: number,
  idleRssMiB: number,
  log: (l: string) => void,
): Promise<LayoutResult> {
  const tag = `mem.${Date.now().toString(36)}`
  const keys = Array.from({ length: nKeys }, (_, k) => `${tag}.${k}`)
  const label = `${nKeys === 1 ? '1 key' : `${nKeys} keys`} × ${fmtNumber(count / nKeys)}`
  const control = connect('raw', server.host, server.port)
  const holder = { 'lock-token': randomToken() }
  const conns: HttpConnection[] = []
  const waiting: Waiting[] = []
  let done: Promise<void>[] = []
  try {
    for (const key of keys) await expectOk(control, 'POST', `/locks/${key}?ttl=10m`, 201, holder)

    // Park: `count` connections, each with its own token, round-robin over the keys.
    const parkStart = performance.now()
    const wait = async (conn: HttpConnection, i: number) => {
      const key = keys[i % keys.length] as string
      const headers = { 'lock-token': randomToken() }
      const w: Waiting = { acquire: 0, release: 0 }
      waiting.push(w)
      try {
        const res = await conn.request('POST', `/locks/${key}?wait=${WAIT}&ttl=30s`, { headers })
        w.acquire = res.status
        if (res.status !== 201) {
          w.error = `acquire: HTTP ${res.status} ${res.body.toString('utf8', 0, 160)}`
          return
        }
        // Granted during the drain: release at once so the next in line gets it.
        const released = await conn.request('DELETE', `/locks/${key}`, { headers })
        w.release = released.status
        if (released.status !== 200) w.error = `release: HTTP ${released.status} ${released.body.toString('utf8', 0, 160)}`
      } catch (err) {
        w.error = err instanceof Error ? err.message : String(err)
      }
    }
    // Until every waiter is in line (or answered: refused ones are reported, not waited for).
    const { sent, parked } = await park(
      server,
      count,
      conns,
      wait,
      () => waitersOn(control, keys),
      () => answered(waiting),
    )
    done = sent
    const parkSeconds = (performance.now() - parkStart) / 1000
    const refused = waiting.filter((w) => w.acquire !== 0 || w.error !== undefined)
    if (parked === 0) throw new Error(`no waiter parked (first failure: ${refused[0]?.error ?? 'none'})`)
    if (parked < count)
      log(
        `  ${label}: only ${parked} of ${count} parked after ${parkSeconds.toFixed(1)} s (${refused.length} answered early: ${refused[0]?.error ?? ''})`,
      )
    const parkedRssMiB = server.proc.memory().rssMb
    const cpu0 = { server: server.proc.cpuMs(), redis: server.redis.reduce((s, r) => s + r.proc.cpuMs(), 0), at: performance.now() }
    await sleep(PARKED_FOR_MS)
    const stillParked = await waitersOn(control, keys)
    const parkedLaterRssMiB = server.proc.memory().rssMb
    const secs = (performance.now() - cpu0.at) / 1000
    const parkedServerCores = (server.proc.cpuMs() - cpu0.server) / 1000 / secs
    const parkedRedisCores = (server.redis.reduce((s, r) => s + r.proc.cpuMs(), 0) - cpu0.redis) / 1000 / secs
    if (stillParked !== parked) log(`  ${label}: ${stillParked} of ${parked} still parked after ${PARKED_FOR_MS / 1000} s`)

    // Drain: drop the holds; each waiter releases as soon as it is granted.
    const drainStart = performance.now()
    for (const key of keys) await expectOk(control, 'DELETE', `/locks/${key}?force=true`, 200)
    await Promise.race([Promise.all(done), sleep(50_000)])
    const drainSeconds = (performance.now() - drainStart) / 1000
    await sleep(1000)
    const drainedRssMiB = server.proc.memory().rssMb
    const peakRssMiB = server.proc.memory().peakRssMb

    const granted = waiting.filter((w) => w.acquire === 201 && w.release === 200).length
    const failedList = waiting.filter((w) => !(w.acquire === 201 && w.release === 200))
    const failures = [...new Set(failedList.map((w) => w.error ?? `no answer (acquire ${w.acquire})`))].slice(0, 3)
    const kibPerWaiter = ((parkedLaterRssMiB - idleRssMiB) * 1024) / parked
    const result: LayoutResult = {
      layout: label,
      keys: nKeys,
      waiters: parked,
      refusedWhileParking: refused.length,
      idleRssMiB,
      parkedRssMiB,
      parkedLaterRssMiB,
      peakRssMiB,
      drainedRssMiB,
      kibPerWaiter,
      scaledTo10kMiB: scaledTo10k(idleRssMiB, Math.max(parkedRssMiB, parkedLaterRssMiB), parked),
      parkSeconds,
      parkedServerCores,
      parkedRedisCores,
      drainSeconds,
      drainGrantsPerSec: granted / drainSeconds,
      granted,
      failed: failedList.length,
      failures,
    }
    log(
      `  ${result.layout.padEnd(16)} parked ${parked} in ${parkSeconds.toFixed(1)} s: RSS ${parkedRssMiB.toFixed(1)} → ${parkedLaterRssMiB.toFixed(1)} MiB ` +
        `(idle ${idleRssMiB.toFixed(1)}), cpu while parked: server ${parkedServerCores.toFixed(2)} redis ${parkedRedisCores.toFixed(2)}; ` +
        `drained ${granted} grants in ${drainSeconds.toFixed(1)} s${failedList.length > 0 ? `, ${failedList.length} FAILED: ${failures.join(' | ')}` : ''}`,
    )
    return result
  } finally {
    for (const c of conns) c.close()
    control.close()
    await Promise.allSettled(done)
  }
}

/** The baseline with `count` open keep-alive connections, each after one answered request. */
async function baselineConnections(server: HttpServer, count: number): Promise<{ rssMiB: number; peakRssMiB: number; failed: number }> {
  const conns: HttpConnection[] = []
  const failures = { failed: 0 }
  try {
    await Promise.all(
      await openEach(
        server,
        count,
        conns,
        postCountingFailures((i) => `/locks/b.${i}`, failures),
        () => sleep(20),
      ),
    )
    await sleep(2000)
    const m = server.proc.memory()
    return { rssMiB: m.rssMb, peakRssMiB: m.peakRssMb, failed: failures.failed }
  } finally {
    for (const c of conns) c.close()
  }
}

/**
 * The floor for parked requests: a fresh baseline process (Fastify, no validation, no Redis) with
 * `count` connections, each with one POST /parked/<key> that the server holds open (an awaited
 * promise) until DELETE /parked answers them all. What Node + Fastify keep per open request.
 */
async function baselineParked(
  server: HttpServer,
  count: number,
): Promise<{ rssMiB: number; laterRssMiB: number; peakRssMiB: number; parked: number; failed: number }> {
  const control = connect('raw', server.host, server.port)
  const conns: HttpConnection[] = []
  const failures = { failed: 0 }
  const parkedNow = async () => (JSON.parse(await expectOk(control, 'GET', '/parked', 200)) as { parked: number }).parked
  try {
    const { sent: answers, parked } = await park(
      server,
      count,
      conns,
      postCountingFailures((i) => `/parked/b.${i % 100}`, failures),
      parkedNow,
      () => 0,
    )
    const rssMiB = server.proc.memory().rssMb
    await sleep(PARKED_FOR_MS)
    const laterRssMiB = server.proc.memory().rssMb
    const peakRssMiB = server.proc.memory().peakRssMb
    await expectOk(control, 'DELETE', '/parked', 200)
    await Promise.race([Promise.all(answers), sleep(20_000)])
    return { rssMiB, laterRssMiB, peakRssMiB, parked, failed: failures.failed }
  } finally {
    for (const c of conns) c.close()
    control.close()
  }
}

const scenario: Scenario = {
  id: 'waiters-memory',
  title: 'Resident memory with 10,000 parked waiters',
  description:
    `VmRSS (MiB) of fresh service processes (MAX_WAITERS=20000): idle (lowest in ${(SETTLE_MS - IDLE_WINDOW_MS) / 1000}–${SETTLE_MS / 1000} s after start), with N waiting requests parked ` +
    `(POST ?wait=${WAIT} behind a held lock, one connection each) once all show in GET /locks/:key and again ${PARKED_FOR_MS / 1000} s later, ` +
    'and 1 s after the line drained (force-release, each waiter releases once granted); peak = VmHWM. ' +
    '"CPU while parked" = cores busy keeping them parked (lease renewals). Baselines (fresh Fastify processes, no Redis): "open connections" holds the same number of keep-alive connections, each after one answered request; "parked requests" holds as many requests open (each awaiting a promise), the floor for a parked waiter.',
  async run(ctx) {
    const selfLimit = openFileLimit('self')
    const [services, baseline, parkedBaseline] = await Promise.all([
      Promise.all(LAYOUTS.map((_, i) => ctx.startService({ nodes: 1, name: `service-waiters-${i + 1}`, env: { MAX_WAITERS: '20000' } }))),
      ctx.startBaseline('baseline-connections'),
      ctx.startBaseline('baseline-parked'),
    ])
    try {
      const serviceLimit = Math.min(...services.map((s) => openFileLimit(s.proc.pid)))
      const fits = Math.min(selfLimit, serviceLimit, openFileLimit(baseline.proc.pid)) - FD_RESERVE
      const count = Math.min(WANTED, Math.floor(fits / 100) * 100)
      if (count <= 0) throw new Error(`open-file limit too low for this scenario (this process ${selfLimit}, service ${serviceLimit})`)
      const notes: string[] = []
      if (count < WANTED) {
        notes.push(
          `**Note:** the open-file limit (this process ${selfLimit}, service ${serviceLimit}) holds only ${count} sockets besides the ${FD_RESERVE} kept free, ` +
            `so ${count} waiters were parked, not ${WANTED}; "scaled to 10k" extrapolates linearly from the measured cost per waiter.`,
        )
      }
      ctx.log(`  ${count} waiters (open-file limit: this process ${selfLimit}, service ${serviceLimit}); settling ${SETTLE_MS / 1000} s`)
      // Idle = the lowest RSS seen once a second over the last IDLE_WINDOW_MS of the settling time
      // (V8's memory reducer runs at a different moment in each process).
      await sleep(SETTLE_MS - IDLE_WINDOW_MS)
      const idle = await lowestRss([...services, baseline, parkedBaseline], IDLE_WINDOW_MS)
      const [baselineIdle, parkedBaselineIdle] = idle.slice(services.length) as [number, number]

      const results: LayoutResult[] = []
      for (const [i, nKeys] of LAYOUTS.entries()) {
        const service = services[i] as HttpServer
        results.push(await measureLayout(service, nKeys, count, idle[i] as number, ctx.log))
        await service.proc.stop()
      }
      const base = await baselineConnections(baseline, count)
      ctx.log(
        `  baseline         ${count} open connections: RSS ${base.rssMiB.toFixed(1)} MiB (idle ${baselineIdle.toFixed(1)})${base.failed > 0 ? `, ${base.failed} FAILED` : ''}`,
      )
      const floor = await baselineParked(parkedBaseline, count)
      const floorRssMiB = Math.max(floor.rssMiB, floor.laterRssMiB)
      ctx.log(
        `  baseline         ${floor.parked} parked requests: RSS ${floor.rssMiB.toFixed(1)} → ${floor.laterRssMiB.toFixed(1)} MiB (idle ${parkedBaselineIdle.toFixed(1)})${floor.failed > 0 ? `, ${floor.failed} FAILED` : ''}`,
      )

      const rows = results.map((r) => [
        `service, ${r.layout}`,
        fmtNumber(r.waiters),
        fmtNumber(r.idleRssMiB),
        fmtNumber(r.parkedRssMiB),
        fmtNumber(r.parkedLaterRssMiB),
        fmtNumber(r.kibPerWaiter),
        r.waiters < WANTED ? fmtNumber(r.scaledTo10kMiB) : '–',
        fmtNumber(r.peakRssMiB),
        fmtNumber(r.drainedRssMiB),
        `${r.parkedServerCores.toFixed(2)} / ${r.parkedRedisCores.toFixed(2)}`,
        `${r.drainSeconds.toFixed(1)} s (${fmtNumber(r.drainGrantsPerSec)}/s)`,
      ])
      /** A baseline's row: its cost per connection or request is over its idle RSS, at its larger reading. */
      const baselineRow = (
        label: string,
        n: number,
        idleMiB: number,
        rssMiB: number,
        laterRssMiB: number | undefined,
        peakRssMiB: number,
      ) => {
        const costMiB = Math.max(rssMiB, laterRssMiB ?? rssMiB)
        const kib = ((costMiB - idleMiB) * 1024) / n
        const scaled = n < WANTED ? fmtNumber(scaledTo10k(idleMiB, costMiB, n)) : '–'
        return [
          label,
          fmtNumber(n),
          fmtNumber(idleMiB),
          fmtNumber(rssMiB),
          laterRssMiB === undefined ? '–' : fmtNumber(laterRssMiB),
          fmtNumber(kib),
          scaled,
          fmtNumber(peakRssMiB),
          '–',
          '–',
          '–',
        ]
      }
      rows.push(baselineRow('baseline, open connections', count, baselineIdle, base.rssMiB, undefined, base.peakRssMiB))
      rows.push(
        baselineRow('baseline, parked requests', floor.parked, parkedBaselineIdle, floor.rssMiB, floor.laterRssMiB, floor.peakRssMiB),
      )
      for (const r of results) {
        const overKiB = r.kibPerWaiter - ((floorRssMiB - parkedBaselineIdle) * 1024) / floor.parked
        notes.push(
          `${r.layout}: ${(Math.max(r.parkedRssMiB, r.parkedLaterRssMiB) / floorRssMiB).toFixed(2)}× the RSS of the baseline holding as many parked requests; ` +
            `the service's own cost per waiter over that floor: ${fmtNumber(overKiB)} KiB.`,
        )
      }
      for (const r of results) {
        if (r.refusedWhileParking > 0) {
          notes.push(
            `**Warning:** ${r.layout}: ${r.refusedWhileParking} of ${count} waiting requests were answered before all were parked, so ${r.waiters} were in line at once; "scaled to 10k" extrapolates.`,
          )
        }
        if (r.failed > 0)
          notes.push(
            `**Warning:** ${r.layout}: ${r.failed} of ${count} waiters were not granted and released (first: \`${(r.failures[0] ?? '').replace(/`/g, "'")}\`).`,
          )
      }
      if (base.failed > 0) notes.push(`**Warning:** baseline: ${base.failed} of ${count} requests failed.`)
      if (floor.failed > 0 || floor.parked < count)
        notes.push(`**Warning:** parked baseline: ${floor.parked} of ${count} parked, ${floor.failed} failed.`)
      const targets = results.map((r) => {
        const mib = r.waiters < WANTED ? r.scaledTo10kMiB : Math.max(r.parkedRssMiB, r.parkedLaterRssMiB)
        const ratio = mib / floorRssMiB
        const name = `RSS with 10,000 parked waiters ÷ the parked baseline's, ${r.waiters < WANTED ? `scaled from ${fmtNumber(r.waiters)}, ` : ''}${r.keys === 1 ? 'one key' : `${r.keys} keys`}`
        return target(name, ratio, `${ratio.toFixed(2)}× (${fmtNumber(mib)} vs ${fmtNumber(floorRssMiB)} MiB)`, '≤', TARGET_RATIO, '×')
      })
      const r2 = (r: LayoutResult) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v]))
      return {
        columns: [
          'process',
          'waiters',
          'idle',
          'all parked',
          `+${PARKED_FOR_MS / 1000} s`,
          'KiB/waiter',
          'scaled to 10k',
          'peak',
          'drained',
          'CPU while parked: server / redis',
          'drain',
        ],
        rows,
        figures: {
          wanted: WANTED,
          waiters: count,
          openFileLimit: { self: selfLimit, service: serviceLimit },
          settleMs: SETTLE_MS,
          parkedForMs: PARKED_FOR_MS,
          service: results.map(r2),
          baseline: {
            idleRssMiB: round(baselineIdle),
            rssMiBWithConnections: round(base.rssMiB),
            peakRssMiB: round(base.peakRssMiB),
            failed: base.failed,
          },
          parkedBaseline: {
            idleRssMiB: round(parkedBaselineIdle),
            parked: floor.parked,
            rssMiB: round(floor.rssMiB),
            laterRssMiB: round(floor.laterRssMiB),
            peakRssMiB: round(floor.peakRssMiB),
            failed: floor.failed,
          },
        },
        targets,
        notes,
      }
    } finally {
      await Promise.all([...services.map((s) => s.proc.stop()), baseline.proc.stop(), parkedBaseline.proc.stop()])
    }
  },
}

export default scenario
