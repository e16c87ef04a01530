/**
 * The abuse limits on the real app and a real redis-server: the request rate per API key (or per
 * address while open), the watches and observes open at once, and the delay before a 401.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import YAML from 'yaml'
import { buildApp, openapiPath, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { RateLimiter, StreamCounts } from '../../src/http/limits.js'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startApp, startListening } from '../../harness/app.js'
import { openEventStream } from '../../harness/event-stream.js'
import { startRedis } from '../../harness/redis-server.js'
import { writeAuthFile } from '../helpers/auth-file.js'
import { until } from '../helpers/until.js'

/** A sample's value in /metrics (labels as written there, e.g. `{key="(open)"}`), or undefined. */
async function metric(app: App, name: string, labels = ''): Promise<number | undefined> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

t.test('a token bucket: a burst, then a request per 1/rate, refilled with time, never past its burst', async (t) => {
  const limiter = new RateLimiter()
  const rate = { perSecond: 10, burst: 3 }
  for (let i = 0; i < 3; i++) t.same(limiter.take('a', rate, 0), { waitMs: 0, firstRefusal: false }, `burst request ${i + 1}`)
  t.same(limiter.take('a', rate, 0), { waitMs: 100, firstRefusal: true }, 'the 4th waits a tenth of a second')
  t.same(limiter.take('a', rate, 0), { waitMs: 100, firstRefusal: false }, 'later refusals are not the first')
  t.same(limiter.take('a', rate, 60), { waitMs: 40, firstRefusal: false }, 'the wait shrinks as the bucket refills')
  t.same(limiter.take('a', rate, 100), { waitMs: 0, firstRefusal: false }, 'one token back after 100 ms')
  t.equal(limiter.take('a', rate, 100).waitMs, 100, 'and taken')
  t.equal(limiter.take('b', rate, 100).waitMs, 0, 'another caller has its own bucket')
  for (let i = 0; i < 3; i++) t.equal(limiter.take('a', rate, 60_000).waitMs, 0, `after a long idle spell: ${i + 1} of the burst`)
  t.ok(limiter.take('a', rate, 60_000).waitMs > 0, 'never more than the burst, however long idle')
  limiter.sweep(60_050)
  t.equal(limiter.size, 1, "sweep keeps a bucket that is not full yet ('a'), forgets a full one ('b')")
  limiter.sweep(60_300)
  t.equal(limiter.size, 0, 'and forgets it once it has refilled')
})

t.test('stream counts: up to max per caller; a release counts once', async (t) => {
  const streams = new StreamCounts()
  const one = streams.open('a', 2)
  const two = streams.open('a', 2)
  t.ok(one && two)
  t.equal(streams.open('a', 2), null, 'a third is refused')
  t.ok(streams.open('b', 2), 'another caller has its own count')
  one?.()
  one?.()
  t.equal(streams.of('a'), 1, 'a release twice counts once')
  t.equal(streams.total, 2)
  t.ok(streams.open('a', 2), 'a slot is free again')
})

t.test('an open service: a rate per client address, 429 rate_limited with Retry-After, probes exempt', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url], { rateLimitPerSecond: 2, rateLimitBurst: 2 })
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ method: 'GET', url: '/locks/a' })).statusCode, 404, `burst ${i + 1}: admitted`)
  const refused = await app.inject({ method: 'GET', url: '/locks/a' })
  t.equal(refused.statusCode, 429)
  const body = refused.json<{ error: string; retryAfterMs: number; limit: number; burst: number; message: string }>()
  t.ok(errorSchema.safeParse(body).success, 'the error shape')
  t.equal(body.error, 'rate_limited')
  t.equal(body.limit, 2)
  t.equal(body.burst, 2)
  t.ok(Number.isInteger(body.retryAfterMs) && body.retryAfterMs >= 1 && body.retryAfterMs <= 500, `retryAfterMs ${body.retryAfterMs}`)
  t.equal(refused.headers['retry-after'], '1', 'Retry-After in whole seconds, at least 1')
  t.match(body.message, /client address 127\.0\.0\.1/)
  t.equal((await app.inject({ method: 'POST', url: '/locks/a' })).statusCode, 429, 'every method counts')
  for (const url of ['/healthz', '/readyz', '/metrics', '/openapi.yaml']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} is never limited`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/nope' })).json().error, 'route_not_found', 'nor an unknown route')
  t.equal(await metric(app, 'lock_rate_limited_total', '{key="(open)"}'), 2, 'counted, labelled "(open)", not by address')
  const reached = logs().filter((l) => l.msg === 'rate limit reached: refusing requests 429')
  t.equal(reached.length, 1, 'one log line per spell of refusals')
  t.match(reached[0], { rateLimit: { key: '(open)', address: '127.0.0.1', perSecond: 2, burst: 2 } })
  t.same(await redis.keys(), {}, 'nothing reached Redis')
  await sleep(body.retryAfterMs + 20)
  t.equal((await app.inject({ method: 'GET', url: '/locks/a' })).statusCode, 404, 'admitted again once the bucket refilled')
})

const keys = [
  { name: 'strict', secret: 'sk_strict_0123456789abcdef', prefixes: [], admin: true },
  { name: 'roomy', secret: 'sk_roomy_0123456789abcdef', prefixes: [], admin: true, rateLimit: { perSecond: 1000, burst: 50 } },
  { name: 'free', secret: 'sk_free_0123456789abcdef', prefixes: ['e'], rateLimit: { perSecond: 0 } },
]
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })
const [strict, roomy, free] = keys as [(typeof keys)[number], (typeof keys)[number], (typeof keys)[number]]
const DELAY_MS = 120

t.test('with API keys: a bucket per key, a key’s own rate, streams per key, 401s after a constant delay', async (t) => {
  const redis = await startRedis({ t })
  const lines: string[] = []
  const config = loadConfig({
    REDIS_URLS: redis.url,
    AUTH_FILE: writeAuthFile(keys),
    RATE_LIMIT_PER_SECOND: '1',
    MAX_STREAMS_PER_KEY: '1',
    AUTH_FAILURE_DELAY_MS: String(DELAY_MS),
  })
  const { Writable } = await import('node:stream')
  const logStream = new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) })
  const app = await buildApp(config, { logStream })
  t.teardown(() => app.close())

  await t.test('RATE_LIMIT_PER_SECOND for keys without their own rate; their own; perSecond 0 exempts', async (t) => {
    t.equal((await app.inject({ method: 'GET', url: '/locks/x', headers: bearer(strict.secret) })).statusCode, 404)
    const refused = await app.inject({ method: 'GET', url: '/locks/x', headers: bearer(strict.secret) })
    t.equal(refused.statusCode, 429, 'the default: 1/s, a burst of 1')
    t.equal(refused.json().error, 'rate_limited')
    t.match(refused.json().message, /API key "strict"/)
    t.equal(refused.headers['retry-after'], '1')
    for (let i = 0; i < 20; i++) {
      const res = await app.inject({ method: 'GET', url: '/locks/x', headers: bearer(roomy.secret) })
      if (res.statusCode !== 404) t.fail(`roomy's request ${i + 1}: ${res.statusCode}`)
      const exempt = await app.inject({ method: 'GET', url: '/elections/e', headers: bearer(free.secret) })
      if (exempt.statusCode !== 404) t.fail(`free's request ${i + 1}: ${exempt.statusCode}`)
    }
    t.equal(await metric(app, 'lock_rate_limited_total', '{key="strict"}'), 1, 'labelled by key name')
    t.equal(await metric(app, 'lock_rate_limited_total', '{key="roomy"}'), undefined, 'roomy never refused')
  })

  await t.test('MAX_STREAMS_PER_KEY counts each key’s watches and observes; the count drops when one answers', async (t) => {
    const observe = (secret: string) =>
      app.inject({ method: 'GET', url: '/elections/e/observe?after=0&revision=0&wait=20s', headers: bearer(secret) })
    const first = observe(free.secret)
    await until(async () => (await metric(app, 'lock_streams')) === 1, 'the first observe to park')
    const second = await observe(free.secret)
    t.equal(second.statusCode, 429)
    t.equal(second.json().error, 'too_many_streams')
    t.equal(second.json().limit, 1)
    t.equal(second.headers['retry-after'], '1')
    const other = observe(roomy.secret)
    await until(async () => (await metric(app, 'lock_streams')) === 2, "another key's observe to park")
    const campaign = await app.inject({ method: 'POST', url: '/elections/e/campaign?candidate=c1', headers: bearer(roomy.secret) })
    t.equal(campaign.statusCode, 201)
    t.equal((await first).json().changed, true, 'the observes answer the change')
    t.equal((await other).json().changed, true)
    await until(async () => (await metric(app, 'lock_streams')) === 0, 'the count to drop to 0')
    t.equal((await observe(free.secret)).statusCode, 200, 'and the key may observe again (at once: the term moved on)')
    t.equal(await metric(app, 'lock_streams_refused_total', '{key="free"}'), 1)
  })

  await t.test('every 401 (no header, malformed, unknown key) waits AUTH_FAILURE_DELAY_MS', async (t) => {
    const failures = [
      {},
      { authorization: 'Basic c2s6c2s=' },
      { authorization: 'Bearer' },
      bearer('sk_not_a_key_0123456789abc'),
      bearer(`${strict.secret}x`),
    ]
    const before = (await metric(app, 'lock_auth_failures_total')) ?? 0
    const answers = await Promise.all(
      failures.map(async (headers) => {
        const start = performance.now()
        const res = await app.inject({ method: 'POST', url: '/locks/x', headers })
        return { res, elapsed: performance.now() - start }
      }),
    )
    for (const [i, { res, elapsed }] of answers.entries()) {
      t.equal(res.statusCode, 401, `failure ${i + 1}: 401`)
      t.equal(res.json().error, 'unauthorized')
      // Timers may fire up to a millisecond early against performance.now().
      t.ok(elapsed >= DELAY_MS - 2, `failure ${i + 1} answered after ${elapsed.toFixed(1)} ms (at least ${DELAY_MS})`)
    }
    t.equal(await metric(app, 'lock_auth_failures_total'), before + failures.length, 'each counted')
    const forbidden = await app.inject({ method: 'POST', url: '/locks/x', headers: bearer(free.secret) })
    t.equal(forbidden.statusCode, 403, 'a valid key outside its prefixes: 403 (not delayed: its caller holds a valid secret)')
  })

  const text = lines.join('')
  for (const k of keys) t.notOk(text.includes(k.secret), `the ${k.name} secret never reaches the logs`)
})

t.test('streams: an event stream or a long poll counts until it answers or its client hangs up', async (t) => {
  const redis = await startRedis({ t })
  const { app, address } = await startListening(t, [redis.url], { maxStreamsPerKey: 2 })
  const token = 'watch-token-0000000000001'
  t.equal((await app.inject({ method: 'POST', url: '/locks/w', payload: { token, ttlMs: 60_000 } })).statusCode, 201)
  const watch = openEventStream(address, '/locks/w/watch?wait=30s', { 'lock-token': token })
  const observe = openEventStream(address, '/elections/v/observe?wait=30s')
  t.equal(await watch.status, 200)
  t.equal(await observe.status, 200)
  await watch.next(1)
  await observe.next(1)
  t.equal(await metric(app, 'lock_streams'), 2)
  const refused = await app.inject({ method: 'GET', url: `/locks/w/watch?wait=1s&token=${token}` })
  t.equal(refused.statusCode, 429, 'a third stream from the same address is refused')
  t.equal(refused.json().error, 'too_many_streams')
  const refusedStream = openEventStream(address, '/elections/v/observe?wait=30s')
  t.equal(await refusedStream.status, 429, 'an event stream too')

  watch.close()
  await until(async () => (await metric(app, 'lock_streams')) === 1, 'the hung-up stream to count down')
  const poll = app.inject({ method: 'GET', url: `/locks/w/watch?wait=20s&token=${token}` })
  await until(async () => (await metric(app, 'lock_streams')) === 2, 'the long poll to count')
  t.equal((await app.inject({ method: 'DELETE', url: `/locks/w?token=${token}` })).statusCode, 200)
  t.match((await poll).json(), { held: false, reason: 'released' })
  await until(async () => (await metric(app, 'lock_streams')) === 1, 'the answered long poll to count down')
  observe.close()
  await until(async () => (await metric(app, 'lock_streams')) === 0, 'every stream to count down')
  const longPoll = http.get(new URL('/elections/v/observe?after=0&revision=0&wait=20s', address))
  longPoll.on('error', () => undefined)
  await until(async () => (await metric(app, 'lock_streams')) === 1, 'a long poll over HTTP to count')
  longPoll.destroy()
  await until(async () => (await metric(app, 'lock_streams')) === 0, 'the hung-up long poll to count down')
  t.equal(await metric(app, 'lock_streams_refused_total', '{key="(open)"}'), 2)
})

t.test('openapi.yaml: every limited route documents 429 rate_limited; watches and observes too_many_streams', async (t) => {
  const doc = YAML.parse(await readFile(openapiPath, 'utf8')) as {
    paths: Record<string, Record<string, { responses: Record<string, { description?: string; headers?: object }> }>>
  }
  const exempt = new Set(['/healthz', '/readyz', '/metrics', '/openapi.yaml'])
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tooMany = operation.responses['429']
      if (exempt.has(path)) {
        t.notOk(tooMany, `${method} ${path}: never limited`)
        continue
      }
      const codes = tooMany?.description?.split(' | ') ?? []
      t.ok(codes.includes('rate_limited'), `${method} ${path}: 429 rate_limited`)
      t.equal(codes.includes('too_many_streams'), /\/(watch|observe)$/.test(path), `${method} ${path}: too_many_streams iff a stream`)
      t.ok(tooMany?.headers && 'Retry-After' in tooMany.headers, `${method} ${path}: Retry-After`)
    }
  }
})
