/**
 * `npm run serve` as a person (or a supervisor) uses it: it listens on 127.0.0.1, starts a local
 * redis-server when nothing answers, reuses one that answers PONG, refuses one that wants a
 * password or a port taken by something else (with the reason), and SIGTERM / SIGINT to the npm
 * process stop the service and the redis-server it started, freeing both ports.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { freePort, startRedis } from '../../harness/redis-server.js'
import { until } from '../helpers/until.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

interface Serve {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

function serve(t: { teardown(fn: () => unknown): void }, env: Record<string, string>): Serve {
  const base = { ...process.env }
  for (const name of ['REDIS_URLS', 'REDIS_URL', 'HOST', 'PORT', 'LOCAL_REDIS_PORT', 'AUTH_FILE']) delete base[name]
  const child = spawn('npm', ['run', 'serve'], {
    cwd: root,
    env: { ...base, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  })
  return { child, output: () => output, exited }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

async function ready(s: Serve, port: number): Promise<void> {
  await until(
    async () => {
      if (s.child.exitCode !== null) throw new Error(`serve exited: ${s.output()}`)
      return fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    },
    'npm run serve to be ready',
    180_000,
    250,
  )
}

/** The pid of the service process, from its 'lock-service ready' log line. */
function servicePid(output: string): number {
  const line = output.split('\n').find((l) => l.includes('"msg":"lock-service ready"'))
  return Number((JSON.parse(line ?? '{}') as { pid?: number }).pid)
}

t.test('SIGTERM to the npm process stops the service and the redis-server it started', async (t) => {
  const [port, redisPort] = [await freePort(), await freePort()]
  const s = serve(t, { PORT: String(port), LOCAL_REDIS_PORT: String(redisPort) })
  await ready(s, port)
  const redisPid = Number(/started a local redis-server on 127\.0\.0\.1:\d+ \(pid (\d+)/.exec(s.output())?.[1])
  const pid = servicePid(s.output())
  t.ok(alive(redisPid) && alive(pid), `a redis-server (${redisPid}) and the service (${pid}) run`)
  const listening = [...s.output().matchAll(/"msg":"Server listening at (\S+)"/g)].map((m) => m[1])
  t.same(listening, [`http://127.0.0.1:${port}`], 'it listens on 127.0.0.1 only')

  s.child.kill('SIGTERM')
  const code = await s.exited
  t.ok(code !== 0, `npm exits (${code})`)
  await until(async () => !alive(pid) && !alive(redisPid), 'the service and redis-server to be gone', 15_000)
  t.notOk(alive(pid), 'the service is gone')
  t.notOk(alive(redisPid), 'the redis-server it started is gone')
  t.notOk(await portAnswers(port), `port ${port} is free`)
  t.notOk(await portAnswers(redisPort), `port ${redisPort} is free`)
})

t.test('SIGINT likewise; a Redis that already answers PONG is used, and left running', async (t) => {
  const redis = await startRedis({ t })
  const port = await freePort()
  const s = serve(t, { PORT: String(port), LOCAL_REDIS_PORT: String(redis.port) })
  await ready(s, port)
  t.match(s.output(), new RegExp(`using the Redis that answers on 127\\.0\\.0\\.1:${redis.port}`))
  t.notMatch(s.output(), /started a local redis-server/)
  const pid = servicePid(s.output())
  s.child.kill('SIGINT')
  await s.exited
  await until(async () => !alive(pid), 'the service to be gone', 15_000)
  t.notOk(await portAnswers(port), 'the service port is free')
  const client = redis.client()
  t.equal(await client.ping(), 'PONG', 'the Redis serve did not start keeps running')
  await client.quit()
})

t.test('a port taken by something that is not Redis: serve stops with the reason', async (t) => {
  const port = await freePort()
  const squatter = net.createServer((socket) => {
    socket.on('error', () => undefined)
    socket.on('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'))
  })
  await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve))
  t.teardown(() => void squatter.close())
  const s = serve(t, { PORT: String(await freePort()), LOCAL_REDIS_PORT: String(port) })
  t.equal(await s.exited, 1, 'exit 1')
  t.match(s.output(), new RegExp(`could not start a redis-server on 127\\.0\\.0\\.1:${port}: .*Address already in use`))
  t.notMatch(s.output(), /started a local redis-server/, 'it does not claim to have started one')
})

t.test('a Redis that wants a password: serve stops and says how to give it', async (t) => {
  const redis = await startRedis({ t })
  const admin = redis.client()
  await admin.config('SET', 'requirepass', 'serve-test-password')
  await admin.quit().catch(() => undefined)
  const s = serve(t, { PORT: String(await freePort()), LOCAL_REDIS_PORT: String(redis.port) })
  t.equal(await s.exited, 1, 'exit 1')
  t.match(s.output(), /refuses PING \(NOAUTH Authentication required\.\); give its password in REDIS_URLS/)
})
