/**
 * Failover figures for leader election (issue #29), on real redis-servers and two service replicas (in
 * this process, each listening on its own port; they share the Redis nodes):
 *
 * 1. failover after a leader's crash: the leader is a client process (campaigning through replica A and
 *    renewing every TTL/3, or keeping its session alive) killed with SIGKILL at a random moment, so its
 *    leadership is left to lapse; a second candidate waits in line through replica B, and an observer
 *    follows the election's event stream on B. Measured: SIGKILL → the next `elected` event, and the
 *    leadership's expiry (as GET showed it just after the kill) → that event (the detection lag);
 * 2. observe latency: the leader resigns through A; DELETE sent → the `vacant` event on B, and → the
 *    next `elected` event (the candidate in line, handed the leadership).
 *
 * Usage: npx tsx bench/elections.ts [--runs 20] [--ttl 2000] [--nodes 1,3]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { startListening } from '../harness/app.js'
import { openEventStream, type EventStream } from '../harness/event-stream.js'
import { request } from '../harness/http.js'
import { startRedisCluster, stopAll } from '../harness/redis-server.js'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    ttl: { type: 'string', default: '2000' },
    nodes: { type: 'string', default: '1,3' },
  },
})
const runs = Number(values.runs)
const ttlMs = Number(values.ttl)

function quantiles(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return `p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, min ${q(0).toFixed(1)} ms (n=${s.length})`
}

/**
 * The crashing leader: campaigns (bound to a session of `ttl` when asked), prints each expiry it is
 * told of as a JSON line, and renews (or keeps its session alive) every TTL/3 until it is killed.
 */
const LEADER = `
const [base, name, ttl, withSession] = process.argv.slice(1)
const post = (path, method, body, token) => fetch(base + path, {
  method, headers: { 'content-type': 'application/json', ...(token ? { 'lock-token': token } : {}) },
  body: body ? JSON.stringify(body) : undefined,
}).then((r) => r.json())
let session
if (withSession === '1') session = (await post('/sessions', 'POST', { ttlMs: Number(ttl) })).id
const lead = await post('/elections/' + name + '/campaign', 'POST',
  session ? { candidate: 'crasher', session, waitMs: 30000 } : { candidate: 'crasher', ttlMs: Number(ttl), waitMs: 30000 })
console.log(JSON.stringify({ term: lead.term, expiresAt: lead.expiresAt }))
setInterval(async () => {
  const before = Date.now()
  if (session) {
    const kept = await post('/sessions/' + session + '/keepalive', 'PUT')
    console.log(JSON.stringify({ expiresAt: kept.expiresAt }))
  } else {
    const renewed = await post('/elections/' + name + '/renew', 'PUT', undefined, lead.token)
    console.log(JSON.stringify({ expiresAt: renewed.expiresAt ?? new Date(before).toISOString() }))
  }
}, Math.floor(Number(ttl) / 3))
`

interface Leader {
  child: ChildProcess
  term: number
  lastExpiry: () => number
}

async function startLeader(base: string, name: string, session: boolean): Promise<Leader> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', LEADER, base, name, String(ttlMs), session ? '1' : '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let lastExpiry = 0
  let term = 0
  const lines = createInterface({ input: child.stdout! })
  await new Promise<void>((resolve, reject) => {
    child.once('exit', () => reject(new Error('the leader process exited before it was elected')))
    lines.on('line', (line) => {
      const seen = JSON.parse(line) as { term?: number; expiresAt?: string }
      if (seen.expiresAt) lastExpiry = Math.max(lastExpiry, Date.parse(seen.expiresAt))
      if (seen.term) {
        term = seen.term
        resolve()
      }
    })
  })
  return { child, term, lastExpiry: () => lastExpiry }
}

async function eventAfter(stream: EventStream, from: number, match: (e: EventStream['events'][number]) => boolean) {
  for (let seen = from + 1; ; seen++) {
    const events = await stream.next(seen, 30_000)
    const e = events[seen - 1]!
    if (match(e)) return { event: e, index: seen }
  }
}

for (const nodes of values.nodes.split(',').map(Number)) {
  const teardowns: (() => unknown)[] = []
  const t = { teardown: (fn: () => unknown) => teardowns.push(fn) }
  const redis = await startRedisCluster(nodes, { t })
  const urls = redis.map((r) => r.url)
  const a = await startListening(t, urls, { logLevel: 'warn' })
  const b = await startListening(t, urls, { logLevel: 'warn' })
  for (const session of [false, true]) {
    const crash: number[] = []
    const detection: number[] = []
    const toVacant: number[] = []
    const toElected: number[] = []
    for (let run = 0; run < runs; run++) {
      const name = `bench-failover-${nodes}-${session ? 's' : 'p'}-${run}-${Date.now()}`
      const stream = openEventStream(b.address, `/elections/${name}/observe?wait=120s`)
      await stream.next(1)
      const leader = await startLeader(a.address, name, session)
      const first = await eventAfter(stream, 1, (e) => e.event === 'elected')
      const waiting = request(b.address, 'POST', `/elections/${name}/campaign`, {
        body: { candidate: 'next', ttlMs: 30_000, waitMs: 30_000 },
        timeoutMs: 60_000,
      })
      // Killed at a random moment of its renewal cycle.
      await sleep(200 + Math.random() * (ttlMs / 3))
      const killedAt = performance.now()
      leader.child.kill('SIGKILL')
      // When the leadership lapses, as the service has it (a renew in flight at the kill may have moved it
      // past the last expiresAt the client read).
      const shown = (await request(a.address, 'GET', `/elections/${name}`)).body as { leader?: { term: number; remainingMs: number } }
      const expiry = shown.leader?.term === leader.term ? Date.now() + shown.leader.remainingMs : leader.lastExpiry()
      const elected = await eventAfter(stream, first.index, (e) => e.event === 'elected')
      crash.push(elected.event.at - killedAt)
      detection.push(Date.now() - (performance.now() - elected.event.at) - expiry)
      const answered = await waiting
      const next = answered.body as { token: string; term: number }
      if (answered.status !== 201 || next.term !== elected.event.data.term) {
        throw new Error(
          `the candidate in line got ${answered.status} ${JSON.stringify(answered.body)}; the event: ${JSON.stringify(elected.event)}`,
        )
      }
      // Resign, with another candidate in line: the observer sees vacant, then elected.
      const third = request(a.address, 'POST', `/elections/${name}/campaign`, { body: { candidate: 'third', waitMs: 30_000 } })
      await sleep(100)
      const sent = performance.now()
      await request(a.address, 'DELETE', `/elections/${name}`, { token: next.token })
      const vacant = await eventAfter(stream, elected.index, (e) => e.event === 'vacant')
      const handed = await eventAfter(stream, vacant.index, (e) => e.event === 'elected')
      toVacant.push(vacant.event.at - sent)
      toElected.push(handed.event.at - sent)
      const thirdLead = (await third).body as { token: string }
      await request(a.address, 'DELETE', `/elections/${name}`, { token: thirdLead.token })
      stream.close()
    }
    const what = `${nodes} node${nodes > 1 ? 's' : ''}, TTL ${ttlMs} ms${session ? ', bound to a session' : ''}`
    console.log(`# ${what}`)
    console.log(`failover, SIGKILL of the leader → next elected event:   ${quantiles(crash)}`)
    console.log(`          its lease's expiresAt → next elected event:   ${quantiles(detection)}`)
    console.log(`observe, resign (DELETE sent) → vacant event:           ${quantiles(toVacant)}`)
    console.log(`         resign (DELETE sent) → next elected event:     ${quantiles(toElected)}`)
  }
  for (const teardown of teardowns.reverse()) await teardown()
}
await stopAll()
