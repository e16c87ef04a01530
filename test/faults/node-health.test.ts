/**
 * Every node failure says why: the reason is classified, logged once when a node goes down and once
 * when it is back, shown in /readyz (`lastError`) and counted in redis_node_errors_total{reason}.
 */
import { spawn } from 'node:child_process'
import net from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { configFrom } from '../../src/config.js'
import { classifyRedisError } from '../../src/redis/errors.js'
import { freePort, startRedis, type RedisProcess, type Teardown } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'
import { until } from '../helpers/until.js'

type Line = Record<string, unknown>
const PASSWORD = 'hunter2-correct-horse'

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)))
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1))
}

/** Warn lines about Redis nodes (the ones with a node index). */
const nodeLines = (lines: Line[]) => lines.filter((l) => l.level === 40 && typeof l.node === 'number')

async function withPassword(t: Teardown): Promise<RedisProcess> {
  const redis = await startRedis({ t })
  const client = redis.client()
  await client.config('SET', 'requirepass', PASSWORD)
  await client.quit().catch(() => undefined)
  return redis
}

/** A TCP server on a free port: `speak` answers what it is sent (or nothing). */
async function fakeServer(t: { teardown(fn: () => unknown): void }, speak?: (socket: net.Socket) => void): Promise<number> {
  const port = await freePort()
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.on('close', () => sockets.delete(socket))
    speak?.(socket)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  return port
}

t.test('a wrong password: logged once, clearly, within a second; /readyz and 503 bodies say auth', async (t) => {
  const redis = await withPassword(t)
  const started = Date.now()
  const { app, logs, logText } = await startApp(t, [`redis://:wrong-password-123@127.0.0.1:${redis.port}`])
  const down = nodeLines(logs()).filter((l) => l.reason === 'auth')
  t.equal(down.length, 1, 'one warn line names the cause')
  const line = down[0] ?? {}
  t.match(line.msg, /Redis node 0 at 127\.0\.0\.1:\d+ is down \(auth\): authentication failed: WRONGPASS/)
  t.match(line.msg, /check the password/)
  t.equal(line.address, redis.address)
  const tookMs = Number(line.time) - started
  t.ok(tookMs < 1000, `logged ${tookMs} ms after the app started connecting`)

  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 503)
  const node = ready.json().nodes[0]
  t.equal(node.up, false)
  t.equal(node.lastError.reason, 'auth')
  t.match(node.lastError.message, /WRONGPASS/)
  t.ok(!Number.isNaN(Date.parse(node.lastError.at)), 'at is a time')

  const refused = await app.inject({ method: 'POST', url: '/locks/k' })
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().nodes[0].lastError.reason, 'auth', 'the 503 body says why too')

  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.ok(metricValue(metrics, 'redis_node_errors_total', { node: '0', reason: 'auth' }) >= 1, 'counted as reason="auth"')

  // ioredis retries all along; the state does not change, so nothing more is logged.
  await new Promise((r) => setTimeout(r, 600))
  t.equal(nodeLines(logs()).length, 1, 'reconnect attempts are not logged again')
  t.notMatch(logText() + ready.body + refused.body + metrics, /wrong-password-123/, 'the password shows nowhere')
})

t.test('the service process: the cause within a second of its first log line, then "cannot grant" instead of "ready"', async (t) => {
  const redis = await withPassword(t)
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../../src/server.ts', import.meta.url).pathname], {
    env: {
      ...process.env,
      REDIS_URLS: `redis://:bad-password-456@127.0.0.1:${redis.port}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => void child.kill('SIGKILL'))
  let output = ''
  child.stdout.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  await until(async () => /cannot grant locks/.test(output), 'the listening line', 15_000)
  const lines = output
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line)
  const cause = lines.find((l) => l.reason === 'auth')
  t.ok(cause, 'the cause is logged')
  t.ok(Number(cause?.time) - Number(lines[0]?.time) < 1000, 'within a second of the first line')
  const listening = lines.find((l) => /cannot grant locks/.test(String(l.msg)))
  t.equal(listening?.level, 40)
  t.match(listening?.msg, /0 of 1 Redis nodes may vote, 1 needed \(node 0 at 127\.0\.0\.1:\d+: auth: authentication failed: WRONGPASS/)
  t.notOk(
    lines.some((l) => l.msg === 'lock-service ready'),
    'it does not say ready',
  )
  t.notMatch(output, /bad-password-456/)
})

t.test('no password for a Redis that needs one: auth (NOAUTH), with the fix in the message', async (t) => {
  const redis = await withPassword(t)
  const { app, logs } = await startApp(t, [redis.url])
  const line = nodeLines(logs())[0]
  t.equal(line?.reason, 'auth')
  t.match(line?.msg, /NOAUTH.*add it to REDIS_URLS/)
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].lastError.reason, 'auth')
})

t.test('refused, not_redis, tls, timeout: each classified', async (t) => {
  const nobody = await freePort()
  const http = await fakeServer(t, (s) => s.on('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')))
  const silent = await fakeServer(t)
  const cases: [string, string, string][] = [
    ['refused', `redis://127.0.0.1:${nobody}`, 'refused'],
    ['an HTTP server', `redis://127.0.0.1:${http}`, 'not_redis'],
    ['TLS to a plain-text server', `rediss://127.0.0.1:${http}`, 'tls'],
    ['a server that never answers', `redis://127.0.0.1:${silent}`, 'timeout'],
  ]
  for (const [what, url, reason] of cases) {
    const { app, logs } = await startApp(t, [url], { nodeTimeoutMs: 200 })
    await until(async () => nodeLines(logs()).length > 0, `a log line for ${what}`)
    t.equal(nodeLines(logs())[0]?.reason, reason, `${what}: logged as ${reason}`)
    const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
    t.equal(ready.nodes[0].lastError?.reason, reason, `${what}: /readyz says ${reason}`)
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    t.ok(metricValue(metrics, 'redis_node_errors_total', { node: '0', reason }) >= 1, `${what}: counted`)
    await app.close()
  }
})

t.test('a node that goes down and comes back: one warn line each way; lastError stays, with its time', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url])
  t.same(nodeLines(logs()), [], 'nothing logged while it is up')
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].lastError, null)

  await redis.kill()
  await until(async () => nodeLines(logs()).length > 0, 'the down line')
  await new Promise((r) => setTimeout(r, 500))
  const down = nodeLines(logs())
  t.equal(down.length, 1, 'one line while it refuses every reconnect')
  t.match(down[0]?.msg, /Redis node 0 at 127\.0\.0\.1:\d+ is down \(refused\)/)

  await redis.restart()
  await until(async () => nodeLines(logs()).length > 1, 'the back-up line')
  const back = nodeLines(logs())[1]
  t.match(back?.msg, /Redis node 0 at 127\.0\.0\.1:\d+ is back up after \d+ ms down \(refused\)/)
  t.type(back?.downMs, 'number')
  const node = (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0]
  t.same([node.up, node.lastError.reason], [true, 'refused'], 'up, and the last failure is still shown')
})

t.test('ioredis writes nothing to the console: a password a server does not need goes to the JSON log', async (t) => {
  const redis = await startRedis({ t })
  const printed: string[] = []
  const original = { warn: console.warn, error: console.error, log: console.log }
  console.warn = (...args: unknown[]) => void printed.push(args.join(' '))
  console.error = (...args: unknown[]) => void printed.push(args.join(' '))
  console.log = (...args: unknown[]) => void printed.push(args.join(' '))
  t.teardown(() => Object.assign(console, original))
  const { app, logs } = await startApp(t, [`redis://:not-needed-pw@127.0.0.1:${redis.port}`])
  t.equal((await app.inject({ method: 'POST', url: '/locks/k' })).statusCode, 201, 'it works')
  Object.assign(console, original)
  t.same(printed, [], 'nothing on the console')
  t.match(nodeLines(logs())[0]?.msg, /a password is given in REDIS_URLS but the server needs none/)
})

t.test('a Redis user that may not run INFO: auth (NOPERM), nothing on the console', async (t) => {
  const redis = await startRedis({ t })
  const admin = redis.client()
  await admin.call('ACL', 'SETUSER', 'locks', 'on', '>locks-secret-pw', '~*', '&*', '+@all', '-info')
  await admin.quit()
  const printed: string[] = []
  const warn = console.warn
  console.warn = (...args: unknown[]) => void printed.push(args.join(' '))
  t.teardown(() => (console.warn = warn))
  const { logs } = await startApp(t, [`redis://locks:locks-secret-pw@127.0.0.1:${redis.port}`])
  console.warn = warn
  t.same(printed, [], 'nothing on the console')
  const line = nodeLines(logs())[0]
  t.equal(line?.reason, 'auth')
  t.match(line?.msg, /may not run INFO/)
})

t.test('a replica: refused at start, and the log says why', async (t) => {
  const primary = await startRedis({ t })
  const replica = await startRedis({ t })
  const client = replica.client()
  await client.call('REPLICAOF', '127.0.0.1', String(primary.port))
  await client.quit()
  const lines: string[] = []
  const logStream = new Writable({
    write: (chunk: Buffer, _enc, done) => done(void lines.push(...chunk.toString().split('\n').filter(Boolean))),
  })
  await t.rejects(buildApp(configFrom({ redisUrls: [replica.url], logLevel: 'info' }), { logStream }), /independent masters/)
  const line = nodeLines(lines.map((l) => JSON.parse(l) as Line))[0]
  t.equal(line?.reason, 'replica')
  t.match(line?.msg, /not a master/)
})

t.test('classifyRedisError', async (t) => {
  const cases: [unknown, string][] = [
    [new Error('WRONGPASS invalid username-password pair or user is disabled.'), 'auth'],
    [new Error('Ready check failed: NOAUTH Authentication required.'), 'auth'],
    [new Error('ERR invalid password'), 'auth'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'refused'],
    [Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }), 'timeout'],
    [new Error('Command timed out'), 'timeout'],
    [Object.assign(new Error('Protocol error, got "H" as reply type byte.'), { name: 'ParserError' }), 'not_redis'],
    [Object.assign(new Error('wrong version number'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }), 'tls'],
    [Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'tls'],
    [new Error("READONLY You can't write against a read only replica."), 'replica'],
    [Object.assign(new Error('getaddrinfo ENOTFOUND redis'), { code: 'ENOTFOUND' }), 'other'],
    ['a string', 'other'],
  ]
  for (const [err, reason] of cases) t.equal(classifyRedisError(err).reason, reason, String(err))
})
