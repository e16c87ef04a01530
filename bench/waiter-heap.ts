/**
 * What a parked waiter keeps on the heap, against what Fastify keeps for a parked request: parks N
 * waiting requests on one held lock of the built service (`dist/server.js`, or `--script`), and as many
 * on `POST /parked/:key` of `bench/baseline-server.js`; takes a heap snapshot of each
 * (`--heapsnapshot-signal`; a snapshot collects garbage first, so it is the live heap); prints the live
 * heap per parked request of both, then the difference per request by kind of object: by constructor,
 * and for plain objects by their property names, for closures' contexts by their variables, for
 * closures by their function names (that is what tells which code keeps them).
 *
 *   npm run build && node --import tsx bench/waiter-heap.ts [--waiters 2000] [--script dist/server.js] [--top 40]
 *
 * Fixed costs (compiled code, the scripts' source, schemas) are divided by N too: compare two builds
 * at the same N, or read the rows whose count per request is about 1 or more. With `--from M` (< N),
 * each process is snapshotted at M parked and again at N, and the figures are the difference per
 * request parked in between: what one more parked request costs, the fixed costs cancelled.
 *
 *   node --import tsx bench/waiter-heap.ts --from 1000 --waiters 3000
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type HttpConnection } from './lib/http-client.js'
import { startNodeServer, startRedisNode, stopAll, type HttpServer } from './lib/processes.js'
import { randomToken } from './lib/flows.js'

const { values } = parseArgs({
  options: {
    waiters: { type: 'string', default: '2000' },
    script: { type: 'string', default: 'dist/server.js' },
    top: { type: 'string', default: '40' },
    from: { type: 'string', default: '0' },
  },
})
const N = Number(values.waiters)
const FROM = Number(values.from)
if (!(FROM >= 0 && FROM < N)) throw new Error(`--from (${FROM}) must be at least 0 and less than --waiters (${N})`)
/** Requests parked between the two snapshots (all of them without --from). */
const PER = N - FROM
const BATCH = 250

type Tally = Map<string, { size: number; count: number }>

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

/** Self size and count of every kind of object in a heap snapshot (see the header for the kinds). */
function tally(file: string): { kinds: Tally; total: number } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  const {
    node_fields: nf,
    node_types: [types],
    edge_fields: ef,
    edge_types: [edgeTypes],
  } = snap.snapshot.meta
  const [nw, ew] = [nf.length, ef.length]
  const [typeAt, nameAt, sizeAt, edgesAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as number[]
  const [edgeTypeAt, edgeNameAt] = ['type', 'name_or_index'].map((f) => ef.indexOf(f)) as number[]
  const kinds: Tally = new Map()
  let total = 0
  let edge = 0
  for (let i = 0; i < snap.nodes.length; i += nw) {
    const type = types[snap.nodes[i + typeAt!]!]!
    const name = snap.strings[snap.nodes[i + nameAt!]!]!
    const edgeCount = snap.nodes[i + edgesAt!]!
    const size = snap.nodes[i + sizeAt!]!
    const named = (edgeType: string) => {
      const names: string[] = []
      for (let e = edge; e < edge + edgeCount * ew; e += ew) {
        if (edgeTypes[snap.edges[e + edgeTypeAt!]!] === edgeType) names.push(snap.strings[snap.edges[e + edgeNameAt!]!]!)
      }
      return names.slice(0, 10).join(',')
    }
    let kind: string
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') kind = 'strings'
    else if (type === 'code') kind = 'compiled code'
    else if (type === 'object' && name === 'Object') kind = `{${named('property')}}`
    else if (type === 'object' && name === 'system / Context') kind = `context (${named('context')})`
    else kind = `${type} ${name.slice(0, 60)}`
    const entry = kinds.get(kind) ?? { size: 0, count: 0 }
    entry.size += size
    entry.count++
    kinds.set(kind, entry)
    total += size
    edge += edgeCount * ew
  }
  return { kinds, total }
}

/** Heap snapshot of `server` (started with --heapsnapshot-signal=SIGUSR2), once it is written. */
async function snapshot(server: HttpServer, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir))
  process.kill(server.proc.pid, 'SIGUSR2')
  for (;;) {
    await sleep(500)
    const added = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'))
    if (!added) continue
    // The snapshot is written on the server's one thread: once it answers again, the file is whole.
    const control = connect('raw', server.host, server.port)
    await control.request('GET', '/readyz')
    control.close()
    return path.join(dir, added)
  }
}

/** Opens connections `from` … `to` - 1 (onto `conns`), each sending `path` (own token), BATCH at a time; resolves once `parked()` says `to`. */
async function park(
  server: HttpServer,
  conns: HttpConnection[],
  from: number,
  to: number,
  requestPath: string,
  parked: () => Promise<number>,
): Promise<void> {
  for (let i = from; i < to; i++) {
    const conn = connect('raw', server.host, server.port)
    conns.push(conn)
    void conn.request('POST', requestPath, { headers: { 'lock-token': randomToken() } }).catch(() => undefined)
    if ((i + 1) % BATCH === 0) await sleep(200)
  }
  const deadline = Date.now() + 60_000
  while ((await parked()) < to) {
    if (Date.now() > deadline) throw new Error(`${server.name}: fewer than ${to} requests parked after 60 s`)
    await sleep(200)
  }
}

async function measure(name: 'service' | 'baseline', dir: string): Promise<{ kinds: Tally; total: number; rssMb: number }> {
  const nodeArgs = ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`]
  const redis = name === 'service' ? [await startRedisNode()] : []
  const server = await startNodeServer({
    name,
    script: name === 'service' ? (values.script as string) : 'bench/baseline-server.js',
    env: { LOG_LEVEL: 'warn', ...(name === 'service' ? { REDIS_URLS: redis[0]!.url, MAX_WAITERS: String(N * 2) } : {}) },
    nodeArgs,
    redis,
  })
  const control = connect('raw', server.host, server.port)
  const count = async (p: string, field: string) =>
    (JSON.parse((await control.request('GET', p)).body.toString()) as Record<string, number>)[field] ?? 0
  let requestPath: string
  let parked: () => Promise<number>
  if (name === 'service') {
    const held = await control.request('POST', '/locks/waiter-heap?ttl=10m', { headers: { 'lock-token': randomToken() } })
    if (held.status !== 201) throw new Error(`holder: HTTP ${held.status}`)
    requestPath = '/locks/waiter-heap?wait=60s'
    parked = () => count('/locks/waiter-heap', 'waiters')
  } else {
    requestPath = '/parked/waiter-heap'
    parked = () => count('/parked', 'parked')
  }
  const conns: HttpConnection[] = []
  let before: { kinds: Tally; total: number } | undefined
  if (FROM > 0) {
    await park(server, conns, 0, FROM, requestPath, parked)
    await sleep(1000)
    before = tally(await snapshot(server, dir))
  }
  await park(server, conns, FROM, N, requestPath, parked)
  await sleep(1000)
  const rssMb = server.proc.memory().rssMb
  const after = tally(await snapshot(server, dir))
  for (const conn of [...conns, control]) conn.close()
  await server.proc.stop()
  return { ...(before ? minus(after, before) : after), rssMb }
}

/** `after` less `before`, kind by kind. */
function minus(after: { kinds: Tally; total: number }, before: { kinds: Tally; total: number }): { kinds: Tally; total: number } {
  const kinds: Tally = new Map()
  for (const kind of new Set([...after.kinds.keys(), ...before.kinds.keys()])) {
    const [a, b] = [after.kinds.get(kind), before.kinds.get(kind)]
    kinds.set(kind, { size: (a?.size ?? 0) - (b?.size ?? 0), count: (a?.count ?? 0) - (b?.count ?? 0) })
  }
  return { kinds, total: after.total - before.total }
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'lock-service-waiter-heap-'))
try {
  const service = await measure('service', dir)
  const baseline = await measure('baseline', dir)
  const kib = (bytes: number) => (bytes / 1024).toFixed(2)
  const parkedNote =
    FROM > 0 ? `${PER} parked requests more (${FROM} → ${N}); live heap each` : `${N} parked requests; live heap per request`
  console.log(`${parkedNote}: service ${kib(service.total / PER)} KiB, baseline ${kib(baseline.total / PER)} KiB`)
  console.log(`(RSS when parked: service ${service.rssMb.toFixed(1)} MiB, baseline ${baseline.rssMb.toFixed(1)} MiB)\n`)
  console.log('| bytes/request more | count/request more | kind |\n|---:|---:|---|')
  const rows = [...new Set([...service.kinds.keys(), ...baseline.kinds.keys()])].map((kind) => {
    const [s, b] = [service.kinds.get(kind), baseline.kinds.get(kind)]
    return { kind, size: ((s?.size ?? 0) - (b?.size ?? 0)) / PER, count: ((s?.count ?? 0) - (b?.count ?? 0)) / PER }
  })
  rows.sort((a, b) => Math.abs(b.size) - Math.abs(a.size))
  for (const r of rows.slice(0, Number(values.top)))
    console.log(`| ${r.size.toFixed(0)} | ${r.count.toFixed(2)} | \`${r.kind.replace(/[|`]/g, ' ')}\` |`)
} finally {
  rmSync(dir, { recursive: true, force: true })
  await stopAll()
}
