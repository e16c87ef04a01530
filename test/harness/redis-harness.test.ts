import { spawn } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { freePort, startRedis, startRedisCluster } from '../../harness/redis-server.js'

const silence = (): void => {}

t.test('a started server answers and keys() snapshots it', async (t) => {
  const redis = await startRedis({ t })
  t.equal(redis.url, `redis://127.0.0.1:${redis.port}`)
  t.equal(redis.address, `127.0.0.1:${redis.port}`)

  const c = redis.client()
  t.teardown(() => c.quit())
  await c.set('greeting', 'hello')
  t.equal(await c.get('greeting'), 'hello')

  await c.hset('h', { b: '2', a: '1' })
  await c.pexpire('h', 60_000)
  await c.zadd('z', 2, 'two', 1, 'one')
  const before = await redis.keys()
  t.same(before, {
    greeting: 'string|persist|"hello"',
    h: 'hash|ttl|[["a","1"],["b","2"]]',
    z: 'zset|persist|["one","1","two","2"]',
  })

  t.same(await redis.keys(), before, 'unchanged data gives an identical snapshot')
  await c.hset('h', 'a', 'changed')
  t.same(await redis.keys(), { ...before, h: 'hash|ttl|[["a","changed"],["b","2"]]' }, 'a changed value changes the snapshot')
  await c.persist('greeting')
  await c.pexpire('greeting', 60_000)
  t.equal((await redis.keys()).greeting, 'string|ttl|"hello"', 'a TTL shows in the snapshot')
})

t.test('kill() takes the server down; restart() brings it back empty on the same port', async (t) => {
  const redis = await startRedis({ t })
  const c = redis.client()
  await c.set('k', 'v')
  c.disconnect()

  await redis.kill()
  const offline = redis.client({ enableOfflineQueue: false, retryStrategy: () => null })
  offline.on('error', silence)
  await t.rejects(offline.get('k'), 'commands fail while the server is down')
  offline.disconnect()
  await redis.kill() // idempotent

  const port = redis.port
  await redis.restart()
  t.equal(redis.port, port)
  const back = redis.client()
  t.teardown(() => back.quit())
  t.equal(await back.dbsize(), 0, 'data did not survive')
  t.same(await redis.keys(), {})

  await redis.stop()
  await redis.stop() // idempotent
})

t.test('pause() makes commands time out until resume()', async (t) => {
  const redis = await startRedis({ t })
  const c = redis.client({ commandTimeout: 200 })
  t.teardown(() => c.quit())
  t.equal(await c.ping(), 'PONG')

  redis.pause()
  await t.rejects(c.ping(), /timed out/i, 'a paused server does not answer')
  redis.resume()
  t.equal(await c.ping(), 'PONG')
})

t.test('stop() works on a paused server', async (t) => {
  const redis = await startRedis()
  redis.pause()
  await redis.stop()
  t.pass('stopped')
})

t.test('startRedisCluster starts independent masters on distinct ports', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  t.equal(nodes.length, 3)
  t.equal(new Set(nodes.map((n) => n.port)).size, 3, 'distinct ports')
  for (const node of nodes) {
    const c = node.client()
    t.equal(await c.ping(), 'PONG', `${node.address} answers`)
    t.equal((await c.info('cluster')).includes('cluster_enabled:0'), true, 'not in cluster mode')
    c.disconnect()
  }
})

t.test('a taken fixed port fails with a clear error', async (t) => {
  const redis = await startRedis({ t })
  await t.rejects(startRedis({ port: redis.port }), /port \d+ exited before becoming ready[\s\S]*already in use/i)
})

t.test('freePort returns a bindable port', async (t) => {
  const port = await freePort()
  t.ok(port > 0 && port < 65536, `got port ${port}`)
})

t.test('servers die with the test process even when it is SIGKILLed', async (t) => {
  const helper = fileURLToPath(new URL('../../harness/redis-server.ts', import.meta.url))
  const script = `
    const { startRedis } = await import(${JSON.stringify(helper)})
    const r = await startRedis()
    console.log(r.port)
    setInterval(() => {}, 1000)
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())))
    child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)))
  })
  t.ok(port > 0, `child started redis on ${port}`)
  child.kill('SIGKILL')

  const deadline = Date.now() + 3_000
  let alive = true
  while (alive && Date.now() < deadline) {
    alive = await portAnswers(port)
    if (alive) await new Promise((r) => setTimeout(r, 50))
  }
  t.notOk(alive, 'the orphaned redis-server was killed by its watchdog')
})

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection({ host: '127.0.0.1', port })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}
