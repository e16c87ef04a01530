import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const TOKEN = 'SecretOwnerToken_0123456789'

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (wanted.every((w) => line.includes(w))) return Number(line.split(' ').at(-1))
  }
  return 0
}

t.test('/healthz and /readyz', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const health = await app.inject({ method: 'GET', url: '/healthz' })
  t.same([health.statusCode, health.json()], [200, { status: 'ok' }])
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200)
  const body = ready.json()
  t.equal(body.ready, true)
  t.equal(body.majority, 1)
  t.same(Object.keys(body.nodes[0]).sort(), [
    'address',
    'clock',
    'index',
    'lastError',
    'latencyMs',
    'quarantineMs',
    'restartedAt',
    'up',
    'vote',
  ])
  t.equal(body.nodes[0].vote, 'counts')
  t.equal(body.nodes[0].clock.state, 'trusted')
  t.equal(body.nodes[0].lastError, null, 'no failure yet')
  t.same([body.nodes[0].index, body.nodes[0].address, body.nodes[0].up], [0, redis.address, true])
  t.type(body.nodes[0].latencyMs, 'number')
})

t.test('a Redis password never shows in /readyz or 503 bodies', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  await client.config('SET', 'requirepass', 'hunter2-secret')
  await client.quit().catch(() => undefined)
  const { app } = await startApp(t, [`redis://:hunter2-secret@127.0.0.1:${redis.port}`])
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200, 'authenticated with the password from the URL')
  t.notMatch(ready.body, /hunter2/)
  await redis.kill()
  const down = await app.inject({ method: 'POST', url: '/locks/pw' })
  t.equal(down.statusCode, 503)
  t.notMatch(down.body, /hunter2/)
  t.match(down.body, redis.address)
})

t.test('/metrics: lock operations, contention, HTTP durations, process metrics', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body
  const before = await scrape()

  const g = (await app.inject({ method: 'POST', url: '/locks/m1', headers: { 'lock-token': TOKEN } })).json()
  await app.inject({ method: 'POST', url: '/locks/m1' }) // held
  await app.inject({ method: 'POST', url: '/locks/m1' }) // held
  await app.inject({ method: 'PUT', url: '/locks/m1/renew', headers: { 'lock-token': TOKEN } })
  await app.inject({ method: 'PUT', url: '/locks/m1/renew', headers: { 'lock-token': 'someone-else-0123456789' } })
  await app.inject({ method: 'DELETE', url: '/locks/m1', headers: { 'lock-token': 'someone-else-0123456789' } })
  await app.inject({ method: 'DELETE', url: '/locks/m1', headers: { 'lock-token': g.token } })
  await app.inject({ method: 'DELETE', url: '/locks/m1', headers: { 'lock-token': g.token } })
  await app.inject({ method: 'POST', url: '/locks/bad{key' })

  const res = await app.inject({ method: 'GET', url: '/metrics' })
  t.match(res.headers['content-type'], /text\/plain/)
  const after = res.body
  const delta = (name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels)
  t.equal(delta('lock_acquire_duration_seconds_count', { mode: 'exclusive', outcome: 'granted' }), 1)
  t.equal(delta('lock_acquire_duration_seconds_count', { mode: 'exclusive', outcome: 'held' }), 2)
  t.equal(delta('lock_contention_total', { mode: 'exclusive' }), 2)
  t.equal(delta('lock_renewals_total', { mode: 'exclusive', outcome: 'renewed' }), 1)
  t.equal(delta('lock_renewals_total', { mode: 'exclusive', outcome: 'not_owner' }), 1)
  t.equal(delta('lock_releases_total', { mode: 'exclusive', outcome: 'not_owner' }), 1)
  t.equal(delta('lock_releases_total', { mode: 'exclusive', outcome: 'released' }), 1)
  t.equal(delta('lock_releases_total', { mode: 'exclusive', outcome: 'not_found' }), 1)
  t.ok(
    delta('http_request_duration_seconds_count', { method: 'POST', route: '/locks/:key', status_class: '2xx' }) === 1,
    'HTTP duration by route pattern and status class',
  )
  t.equal(delta('http_request_duration_seconds_count', { method: 'POST', route: '/locks/:key', status_class: '4xx' }), 3)
  t.equal(metricValue(after, 'redis_node_up', { node: '0' }), 1)
  t.ok(metricValue(after, 'redis_node_command_duration_seconds_count', { node: '0' }) > 0)
  t.match(after, /process_cpu_user_seconds_total/, 'process metrics')
  t.notMatch(after, /m1|bad\{key/, 'no lock key as a label value')
  t.notMatch(after, new RegExp(TOKEN), 'no token')
})

t.test('logs: pino JSON with request ids; tokens never appear', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs, logText } = await startApp(t, [redis.url])
  await app.inject({ method: 'POST', url: '/locks/l1', payload: { token: TOKEN }, headers: { 'x-request-id': 'trace-abc-123' } })
  await app.inject({ method: 'PUT', url: '/locks/l1/renew', headers: { 'lock-token': TOKEN, authorization: 'Bearer sk_live_secret' } })
  await app.inject({ method: 'PUT', url: `/locks/l1/renew?token=${TOKEN}` }) // 400: unknown query param, logged
  const res = await app.inject({ method: 'DELETE', url: `/locks/l1?token=${TOKEN}` })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-request-id'] !== undefined, true, 'every reply carries its request id')

  const lines = logs()
  const requests = lines.filter((l) => typeof l.reqId === 'string')
  t.equal(requests.length, 4, 'one line per request')
  t.ok(
    requests.every((l) => l.msg === 'request completed' && l.level === 30),
    'at info, when answered',
  )
  t.ok(
    requests.every((l) => typeof (l.res as { statusCode?: unknown }).statusCode === 'number' && typeof l.responseTime === 'number'),
    'with the status and the time taken',
  )
  t.same(
    requests.map((l) => (l.req as { method: string }).method),
    ['POST', 'PUT', 'PUT', 'DELETE'],
    'with the method',
  )
  t.ok(
    requests.some((l) => l.reqId === 'trace-abc-123'),
    'an incoming X-Request-Id is used',
  )
  const made = requests.map((l) => l.reqId as string).filter((id) => id !== 'trace-abc-123')
  t.equal(new Set(made).size, 3, 'the others get ids of their own, each a different one')
  t.ok(
    made.every((id) => /^[A-Za-z0-9_-]{12}-[0-9a-z]+$/.test(id)),
    "made of this process's random prefix and a counter",
  )
  t.equal(res.headers['x-request-id'], made[2], 'the reply carries the id its log line has')
  t.ok(logText().includes('/locks/l1?token=[redacted]'), 'the query token is redacted in the logged URL')
  t.notOk(logText().includes(TOKEN), 'the token appears nowhere in the logs')
  t.notOk(logText().includes('sk_live_secret'), 'nor does an Authorization header')
})

t.test('logs: probes (/healthz, /readyz, /metrics) are not logged at info', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url])
  const before = logs().length
  for (const url of ['/healthz', '/readyz', '/metrics']) await app.inject({ method: 'GET', url })
  t.same(logs().slice(before), [], 'nothing at info')
  const debug = await startApp(t, [redis.url], { logLevel: 'debug' })
  await debug.app.inject({ method: 'GET', url: '/readyz' })
  t.ok(
    debug.logs().some((l) => l.level === 20 && l.msg === 'request completed' && (l.req as { url: string }).url === '/readyz'),
    'at debug they are',
  )
})

t.test('a request no route answers (404, 405) has its request id, its log line and its HTTP metric like any other', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url])
  const missing = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'trace-404' } })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['x-request-id'], 'trace-404', 'the 404 carries the request id')
  const wrongMethod = await app.inject({ method: 'PATCH', url: '/locks/l1' })
  t.equal(wrongMethod.statusCode, 405)
  t.match(wrongMethod.headers['x-request-id'], /^\S+$/, 'so does a 405')
  const lines = logs().filter((l) => l.msg === 'request completed')
  t.ok(
    lines.some((l) => l.reqId === 'trace-404' && (l.res as { statusCode: number }).statusCode === 404),
    'the 404 has its one line, with its id and status',
  )
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(
    metrics,
    /http_request_duration_seconds_count\{method="GET",route="unmatched",status_class="4xx"\} 1\b/,
    'counted as unmatched, 4xx',
  )
})
