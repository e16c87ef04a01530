/**
 * The members of ioredis and prom-client the service relies on although neither documents them. They
 * are pinned (exact versions in package.json); this test is what an upgrade must pass: each failure
 * names the member and the file of ours that uses it.
 *
 * - src/redis/script-call.ts: ioredis `Command` (constructor options, `args` and `name` set after it,
 *   `toWritable(socket)` called with the connection's socket, `promise`).
 * - src/redis/coalesce.ts: a Redis client's `stream` (corked / uncorked) and `commandQueue.length`.
 * - src/redis/health.ts (quietClient): `auth`, `info` and `duplicate` replaced on the client object,
 *   and called through it by ioredis' handshake (`auth`, then the ready check's `info`, each with a
 *   callback last).
 * - src/redis/socket-guard.ts: a Redis client's `connector`, whose `connect` resolves with the socket
 *   the client then uses (wrapped to add an 'error' listener).
 * - src/redis/confirmed-writes.ts: the exported (@ignore) `Pipeline`: `new Pipeline(client)`,
 *   `sendCommand(command)`, `exec()` answering [error, reply] pairs in order.
 * - src/metrics-fast.ts: prom-client's `Registry.registerMetric` taking any object with `name`,
 *   `help`, `type`, `aggregator` and `get()` (read by `metrics()` and `getMetricsAsJSON()`),
 *   `reset()` (called by `resetMetrics()`), `name` renamed in OpenMetrics mode.
 */
import { readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { Cluster, Command, Pipeline, Redis } from 'ioredis'
import { Registry, type Metric, type RegistryContentType } from 'prom-client'
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { guardSockets } from '../../src/redis/socket-guard.js'

const root = new URL('../../', import.meta.url)
const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), 'utf8')) as { version: string }).version

t.test('package.json pins ioredis and prom-client to the installed versions (their private members are relied on)', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of ['ioredis', 'prom-client']) {
    const wanted = pkg.dependencies[name]
    t.match(wanted, /^\d+\.\d+\.\d+$/, `${name}: an exact version in package.json, no range (is "${wanted}")`)
    t.equal(wanted, installedVersion(name), `${name}: package.json names the installed version`)
  }
})

/** The connection's socket as ioredis keeps it (a private member). */
const socketOf = (client: Redis) => (client as unknown as { stream?: unknown }).stream

t.test('ioredis Command: what src/redis/script-call.ts overrides and sets', async (t) => {
  const where = '(src/redis/script-call.ts)'
  t.equal(typeof Command.prototype.toWritable, 'function', `Command.prototype.toWritable is a method ${where}`)
  t.equal(Command.prototype.toWritable.length, 1, `Command.toWritable takes one argument, the socket ${where}`)
  const command = new Command('evalsha', [], { replyEncoding: 'utf8' })
  t.ok(Array.isArray(command.args), `Command.args is an array ${where}`)
  t.equal(command.name, 'evalsha', `Command.name is the name given to the constructor ${where}`)
  t.ok(command.promise instanceof Promise, `Command.promise is a Promise ${where}`)
  command.args = ['PONG']
  command.name = 'echo'
  t.equal(
    command.toWritable(undefined as never),
    '*2\r\n$4\r\necho\r\n$4\r\nPONG\r\n',
    `Command.toWritable reads name and args set later ${where}`,
  )

  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  const seen: unknown[] = []
  class Spy extends Command {
    override toWritable(socket: object): string | Buffer {
      seen.push(socket)
      return super.toWritable(socket)
    }
  }
  const spy = new Spy('echo', ['hello'], { replyEncoding: 'utf8' })
  void client.sendCommand(spy)
  t.equal(await spy.promise, 'hello', `Command.promise resolves with the reply, as a string with replyEncoding utf8 ${where}`)
  t.equal(seen.length, 1, `Redis.sendCommand calls Command.toWritable once ${where}`)
  t.equal(seen[0], socketOf(client), `Command.toWritable is given the connection's socket (Redis.stream) ${where}`)
})

t.test('ioredis Redis.stream and Redis.commandQueue: what src/redis/coalesce.ts corks and counts', async (t) => {
  const where = '(src/redis/coalesce.ts)'
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  const { stream, commandQueue } = client as unknown as { stream?: unknown; commandQueue?: { length?: unknown } }
  t.ok(stream instanceof Writable, `Redis.stream is the connection, a Writable ${where}`)
  const socket = stream as Writable
  t.equal(typeof socket.cork, 'function', `Redis.stream.cork ${where}`)
  t.equal(typeof socket.uncork, 'function', `Redis.stream.uncork ${where}`)
  t.equal(socket.writable, true, `Redis.stream.writable while connected ${where}`)
  t.equal(commandQueue?.length, 0, `Redis.commandQueue.length is 0 with nothing in flight ${where}`)
  const pending = [client.ping(), client.ping()]
  t.equal(commandQueue?.length, 2, `Redis.commandQueue.length counts the commands awaiting replies ${where}`)
  socket.cork()
  const held = client.echo('held')
  t.equal(socket.writableLength > 0, true, `Redis.sendCommand writes into Redis.stream (held while corked) ${where}`)
  socket.uncork()
  t.equal(await held, 'held')
  await Promise.all(pending)
  t.equal(commandQueue?.length, 0, `Redis.commandQueue empties as replies arrive ${where}`)
})

t.test('ioredis auth / info / duplicate: what quietClient in src/redis/health.ts replaces', async (t) => {
  const where = '(src/redis/health.ts quietClient)'
  for (const name of ['auth', 'info', 'duplicate'] as const) {
    t.equal(typeof Redis.prototype[name], 'function', `Redis.prototype.${name} is a method ${where}`)
  }
  t.equal(typeof Cluster.prototype.duplicate, 'function', `Cluster.prototype.duplicate is a method (src/redis/pubsub-scan.ts)`)
  const redis = await startRedis({ t })
  const admin = redis.client()
  await admin.config('SET', 'requirepass', 'guard-secret-pw')
  await admin.quit().catch(() => undefined)
  const client = new Redis({ port: redis.port, host: '127.0.0.1', password: 'guard-secret-pw', lazyConnect: true, maxRetriesPerRequest: 0 })
  t.teardown(() => client.disconnect())
  const calls: { name: string; callbackLast: boolean }[] = []
  const methods = client as unknown as Record<'auth' | 'info', (...args: unknown[]) => unknown>
  for (const name of ['auth', 'info'] as const) {
    const original = methods[name].bind(client)
    methods[name] = (...args: unknown[]) => {
      calls.push({ name, callbackLast: typeof args.at(-1) === 'function' })
      return original(...args)
    }
  }
  await client.connect()
  t.same(
    calls.slice(0, 2),
    [
      { name: 'auth', callbackLast: true },
      { name: 'info', callbackLast: true },
    ],
    `the handshake calls the client object's own auth, then info (the ready check), each with a callback last ${where}`,
  )
  const copy = client.duplicate()
  t.ok(copy instanceof Redis, `Redis.duplicate() returns a new Redis ${where}`)
  copy.disconnect()
})

t.test("ioredis Redis.connector: what src/redis/socket-guard.ts wraps (its connect resolves with the client's socket)", async (t) => {
  const where = '(src/redis/socket-guard.ts)'
  const redis = await startRedis({ t })
  const plain = redis.client({ lazyConnect: true })
  const guarded = redis.client({ lazyConnect: true })
  t.teardown(() => [plain, guarded].forEach((c) => c.disconnect()))
  const connector = (guarded as unknown as { connector?: { connect?: unknown } }).connector
  t.equal(typeof connector?.connect, 'function', `Redis.connector.connect is a method ${where}`)
  guardSockets(guarded)
  await Promise.all([plain.ping(), guarded.ping()])
  const errorListeners = (c: Redis) => (socketOf(c) as { listenerCount(event: string): number }).listenerCount('error')
  t.equal(
    errorListeners(guarded),
    errorListeners(plain) + 1,
    `the socket the connector resolves with is the client's: the guard's 'error' listener is on it ${where}`,
  )
})

t.test('ioredis Pipeline: what src/redis/confirmed-writes.ts sends a script and its WAIT through', async (t) => {
  const where = '(src/redis/confirmed-writes.ts)'
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  t.equal(typeof Pipeline, 'function', `ioredis exports Pipeline ${where}`)
  const pipeline = new Pipeline(client)
  t.equal(typeof pipeline.sendCommand, 'function', `Pipeline.sendCommand ${where}`)
  const echo = new Command('echo', ['first'], { replyEncoding: 'utf8' })
  pipeline.sendCommand(echo)
  pipeline.sendCommand(new Command('wait', ['0', '10']))
  const exec = (pipeline as unknown as { exec?: () => Promise<unknown> }).exec
  t.equal(typeof exec, 'function', `Pipeline.exec ${where}`)
  const results = await (exec as () => Promise<unknown>).call(pipeline)
  t.same(
    results,
    [
      [null, 'first'],
      [null, 0],
    ],
    `Pipeline.exec answers [error, reply] per command, in order ${where}`,
  )
  t.equal(await echo.promise, 'first', `a command sent into a Pipeline keeps its own promise ${where}`)
})

t.test("prom-client Registry: what src/metrics-fast.ts's classes rely on (registerMetric of a metric it did not make)", async (t) => {
  const where = '(src/metrics-fast.ts)'
  let resets = 0
  const metric = {
    name: 'guard_events',
    help: 'A metric made outside prom-client',
    type: 'counter' as const,
    aggregator: 'sum' as const,
    get: () =>
      Promise.resolve({
        name: metric.name,
        help: metric.help,
        type: metric.type,
        aggregator: metric.aggregator,
        values: [{ value: 3, labels: { node: '0' } }],
      }),
    reset: () => void resets++,
  }
  const registry = new Registry<RegistryContentType>()
  t.equal(typeof registry.registerMetric, 'function', `Registry.registerMetric ${where}`)
  registry.registerMetric(metric as unknown as Metric)
  t.equal(
    registry.getSingleMetric('guard_events'),
    metric as unknown as Metric,
    `Registry.registerMetric keeps the object by its name ${where}`,
  )
  t.match(
    await registry.metrics(),
    /# HELP guard_events A metric made outside prom-client\n# TYPE guard_events counter\nguard_events\{node="0"\} 3/,
    `Registry.metrics() prints what the metric's get() returns (name, help, type, values) ${where}`,
  )
  const json = await registry.getMetricsAsJSON()
  t.equal(
    (json[0] as { values?: { value: number }[] } | undefined)?.values?.[0]?.value,
    3,
    `Registry.getMetricsAsJSON() reads get() ${where}`,
  )
  registry.resetMetrics()
  t.equal(resets, 1, `Registry.resetMetrics() calls the metric's reset() ${where}`)
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE)
  t.match(
    await registry.metrics(),
    /guard_events_total\{node="0"\} 3/,
    `OpenMetrics: the registry renames a counter through its name ${where}`,
  )
})
