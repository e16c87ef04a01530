/**
 * Figures for sessions and the lost-lock signal (issue #16), on real redis-servers and two service
 * replicas (in this process, each listening on its own port; they share the Redis nodes):
 *
 * 1. keepalive of a session with 100 bound holds (one call) against 100 renews of 100 plain holds
 *    (sent at once, and one after the other), p50 / p99 per round;
 * 2. watch latency: a watcher on replica B, the hold force-released through replica A (from the
 *    DELETE being sent to the watch's answer), and a hold expiring (from its expiresAt to the answer).
 *
 * Usage: npx tsx bench/sessions.ts [--nodes 1|3] [--rounds 200]
 */
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { startListening } from '../harness/app.js'
import { request } from '../harness/http.js'
import { startRedisCluster, stopAll } from '../harness/redis-server.js'

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '1' }, rounds: { type: 'string', default: '200' } } })
const nodes = Number(values.nodes)
const rounds = Number(values.rounds)
const teardowns: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => teardowns.push(fn) }

function quantiles(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return `p50 ${q(0.5).toFixed(2)} ms, p99 ${q(0.99).toFixed(2)} ms, max ${q(1).toFixed(2)} ms (n=${s.length})`
}

const redis = await startRedisCluster(nodes, { t })
const urls = redis.map((r) => r.url)
const a = await startListening(t, urls, { logLevel: 'warn' })
const b = await startListening(t, urls, { logLevel: 'warn' })
console.log(`# sessions and watch figures: ${nodes} Redis node(s), 2 replicas`)

// 1. keepalive vs renews
const session = (await request(a.address, 'POST', '/sessions', { body: { ttlMs: 60_000 } })).body.id as string
const tokens: string[] = []
for (let i = 0; i < 100; i++) {
  const bound = await request(a.address, 'POST', `/locks/bench-bound-${i}`, { body: { session } })
  if (bound.status !== 201) throw new Error(`bound acquire: ${bound.status}`)
  const plain = await request(a.address, 'POST', `/locks/bench-plain-${i}?ttl=60s`)
  if (plain.status !== 201) throw new Error(`plain acquire: ${plain.status}`)
  tokens.push(plain.body.token as string)
}
const keepalive: number[] = []
const renewsParallel: number[] = []
const renewsSerial: number[] = []
for (let round = 0; round < rounds; round++) {
  let started = performance.now()
  const kept = await request(a.address, 'PUT', `/sessions/${session}/keepalive`)
  keepalive.push(performance.now() - started)
  if ((kept.body.holds as unknown[]).length !== 100) throw new Error('keepalive lost holds')
  started = performance.now()
  const renewed = await Promise.all(tokens.map((token, i) => request(a.address, 'PUT', `/locks/bench-plain-${i}/renew`, { token })))
  renewsParallel.push(performance.now() - started)
  if (renewed.some((r) => r.status !== 200)) throw new Error('a renew failed')
  if (round % 10 === 0) {
    started = performance.now()
    for (const [i, token] of tokens.entries()) await request(a.address, 'PUT', `/locks/bench-plain-${i}/renew`, { token })
    renewsSerial.push(performance.now() - started)
  }
}
console.log(`keepalive, 1 session with 100 holds (one call): ${quantiles(keepalive)}`)
console.log(`100 renews sent at once (100 HTTP calls):        ${quantiles(renewsParallel)}`)
console.log(`100 renews one after the other:                  ${quantiles(renewsSerial)}`)

// 2. watch latency: force-release through A, watcher on B
const forced: number[] = []
const deleteOnly: number[] = []
for (let i = 0; i < Math.min(rounds, 100); i++) {
  const key = `bench-watch-${i}`
  const token = (await request(a.address, 'POST', `/locks/${key}?ttl=30s`)).body.token as string
  const watching = request(b.address, 'GET', `/locks/${key}/watch?wait=10s`, { token }).then((r) => ({ r, at: performance.now() }))
  await sleep(30)
  const sent = performance.now()
  await request(a.address, 'DELETE', `/locks/${key}?force=true`)
  deleteOnly.push(performance.now() - sent)
  const { r, at } = await watching
  if (r.body.reason !== 'force_released') throw new Error(`watch: ${JSON.stringify(r.body)}`)
  forced.push(at - sent)
}
console.log(`watch, force-release through the other replica (DELETE sent → watch answered): ${quantiles(forced)}`)
console.log(`  (the force-release DELETE itself, sent → answered:                            ${quantiles(deleteOnly)})`)

// 3. expiry: from the hold's expiresAt to the watch's answer
const expiry: number[] = []
for (let i = 0; i < Math.min(rounds, 50); i++) {
  const key = `bench-expiry-${i}`
  const grant = (await request(a.address, 'POST', `/locks/${key}?ttl=200ms`)).body
  const r = await request(b.address, 'GET', `/locks/${key}/watch?wait=5s`, { token: grant.token as string })
  const answered = Date.now()
  if (r.body.reason !== 'expired') throw new Error(`watch: ${JSON.stringify(r.body)}`)
  expiry.push(answered - Date.parse(grant.expiresAt as string))
}
console.log(`watch, expiry (the grant's expiresAt → watch answered, wall clock): ${quantiles(expiry)}`)

for (const fn of teardowns.reverse()) await fn()
await stopAll()
