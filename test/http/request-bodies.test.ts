/**
 * What a client sends that the service cannot take as it is: a body that stops arriving, a compressed
 * body, a body with prototype-poisoning keys, a query parameter given twice. Each gets a clear answer
 * in the service's error shape, and nothing is granted.
 */
import net from 'node:net'
import t from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'

/** Write `parts` with `gapMs` between them; resolve with what came back up to the close (or `limitMs`). */
function exchange(port: number, parts: string[], gapMs: number, limitMs: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = net.connect(port, '127.0.0.1', () => {
      parts.forEach((part, i) => setTimeout(() => socket.writable && socket.write(part), i * gapMs))
    })
    let text = ''
    socket.on('data', (d: Buffer) => (text += d.toString()))
    socket.on('error', reject)
    const timer = setTimeout(() => socket.destroy(), limitMs)
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ text, ms: Date.now() - started })
    })
  })
}

function statusOf(text: string): number {
  return Number(text.split(' ')[1])
}

function bodyOf(text: string): unknown {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))
}

t.test('a body that stops arriving gets 408 in the service shape, a log line, and the connection closes', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url], { bodyTimeoutMs: 800 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const head = 'POST /locks/stalled HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n'
  const { text, ms } = await exchange(port, [head + '{"ttlMs":'], 0, 5000)
  t.equal(statusOf(text), 408, 'answered 408')
  const body = errorSchema.parse(bodyOf(text))
  t.equal(body.error, 'request_timeout')
  t.match(body.message, /did not arrive in time \(BODY_TIMEOUT_MS\)/)
  t.ok(ms >= 700 && ms < 3000, `answered once the body timeout ran out, not long after (${ms} ms)`)
  t.match(text, /connection: close/i, 'the connection is closed: the rest of the body would be read as a request')
  t.ok(
    logs().some((l) => l.level === 40 && typeof l.msg === 'string' && /did not arrive in time/.test(l.msg)),
    'a warning says the request did not arrive in time',
  )
  const inspect = await app.inject({ method: 'GET', url: '/locks/stalled' })
  t.equal(inspect.statusCode, 404, 'nothing was granted')
})

t.test('the body timeout bounds receiving a request, never answering it: long polls and waits outlast it', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { bodyTimeoutMs: 500 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const token = 'long-poll-token-0123456789'
  t.equal((await app.inject({ method: 'POST', url: '/locks/lp?ttl=30s', headers: { 'lock-token': token } })).statusCode, 201)
  const watch = `GET /locks/lp/watch?wait=2s HTTP/1.1\r\nHost: x\r\nLock-Token: ${token}\r\nConnection: close\r\n\r\n`
  const body = '{"ttlMs":5000,"waitMs":3000}'
  const wait = `POST /locks/lp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  const [watched, waited] = await Promise.all([
    exchange(port, [watch], 0, 6000),
    exchange(port, [wait], 0, 6000),
    new Promise((resolve) => setTimeout(resolve, 1500)).then(() =>
      app.inject({ method: 'DELETE', url: '/locks/lp', headers: { 'lock-token': token } }),
    ),
  ])
  t.equal(statusOf(watched.text), 200, `the watch answered after ${watched.ms} ms`)
  t.match(bodyOf(watched.text), { held: false, reason: 'released' })
  t.equal(statusOf(waited.text), 201, `the waiting acquire was granted after ${waited.ms} ms`)
  t.ok(waited.ms > 1000, 'it waited longer than the body timeout')
})

t.test('a body that arrives in pieces within the timeout is taken', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { bodyTimeoutMs: 1500 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const body = '{"ttlMs":5000}'
  const head = `POST /locks/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`
  const { text } = await exchange(port, [head + body.slice(0, 5), body.slice(5)], 400, 5000)
  t.equal(statusOf(text), 201, 'granted')
  t.match(bodyOf(text), { key: 'slow', ttlMs: 5000 })
})

t.test('compressed bodies, poisoning keys and repeated query parameters: clear 4xx, nothing granted', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])

  const gz = await app.inject({
    method: 'POST',
    url: '/locks/gz',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    payload: '{"ttlMs":5000}',
  })
  t.equal(gz.statusCode, 415, 'a body with Content-Encoding gzip is refused, whatever the bytes')
  t.match(errorSchema.parse(gz.json()), { error: 'unsupported_media_type', message: /Content-Encoding "gzip" is not supported/ })
  const identity = await app.inject({
    method: 'POST',
    url: '/locks/id',
    headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    payload: '{"ttlMs":5000}',
  })
  t.equal(identity.statusCode, 201, 'Content-Encoding identity is no encoding')

  for (const payload of ['{"__proto__":{"admin":true}}', '{"ttlMs":5000,"constructor":{"prototype":{"x":1}}}']) {
    const res = await app.inject({ method: 'POST', url: '/locks/proto', headers: { 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 400, payload)
    const body = errorSchema.parse(res.json())
    t.equal(body.error, 'invalid_request')
    t.match(body.message, /__proto__.*refused/, 'says what is refused and why, not "not valid JSON"')
  }
  const broken = await app.inject({
    method: 'POST',
    url: '/locks/proto',
    headers: { 'content-type': 'application/json' },
    payload: '{"ttlMs":',
  })
  t.match(broken.json(), { error: 'invalid_request', message: 'the body is not valid JSON' }, 'broken JSON is still called that')

  const twice = await app.inject({ method: 'POST', url: '/locks/q?ttl=1s&ttl=2s' })
  t.equal(twice.statusCode, 400)
  const body = errorSchema.parse(twice.json())
  t.match(body.message, /query parameter "ttl" is given more than once/)
  t.notMatch(body.message, /received array/, 'not the validator’s own words')

  for (const key of ['gz', 'proto', 'q']) {
    t.equal((await app.inject({ method: 'GET', url: `/locks/${key}` })).statusCode, 404, `nothing granted on ${key}`)
  }
})
