import net from 'node:net'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startProxy } from '../../harness/tcp-proxy.js'

type Outcome = { reply: string } | 'closed' | 'silence'

/** A raw connection to the proxy, to see exactly what a client sees: replies, a close, or nothing. */
async function connect(
  port: number,
): Promise<{ send(command: string, withinMs?: number): Promise<Outcome>; closed: Promise<void>; destroy(): void }> {
  const socket = net.connect({ host: '127.0.0.1', port })
  socket.on('error', () => {})
  socket.setEncoding('utf8')
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let isClosed = false
  void closed.then(() => (isClosed = true))
  await new Promise<void>((resolve) => {
    socket.once('connect', () => resolve())
    socket.once('close', () => resolve())
  })
  return {
    closed,
    destroy: () => socket.destroy(),
    send: (command, withinMs = 400) =>
      new Promise<Outcome>((resolve) => {
        if (isClosed) return resolve('closed')
        let buffer = ''
        const onData = (chunk: string) => {
          buffer += chunk
          if (buffer.endsWith('\r\n')) finish({ reply: buffer.trim() })
        }
        const finish = (outcome: Outcome) => {
          clearTimeout(timer)
          socket.off('data', onData)
          resolve(outcome)
        }
        const timer = setTimeout(() => finish('silence'), withinMs)
        socket.on('data', onData)
        void closed.then(() => finish('closed'))
        socket.write(command)
      }),
  }
}

t.test('forwards, and each connection dials the target anew (a restarted target is reached)', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  t.equal(proxy.url, `redis://127.0.0.1:${proxy.port}`)
  t.equal(proxy.address, `127.0.0.1:${proxy.port}`)
  t.equal(proxy.isCut, false)
  const a = await connect(proxy.port)
  t.same(await a.send('PING\r\n'), { reply: '+PONG' })

  await redis.restart()
  await a.closed // the old upstream died with the old process, and the client sees it
  const b = await connect(proxy.port)
  t.same(await b.send('PING\r\n'), { reply: '+PONG' }, 'a new connection reaches the restarted server')
  b.destroy()
})

t.test('large replies pass intact (backpressure)', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const client = redis.client({ port: proxy.port })
  t.teardown(() => client.disconnect())
  const value = 'v'.repeat(4 * 1024 * 1024)
  await client.set('big', value)
  t.equal((await client.get('big'))?.length, value.length)
})

t.test('dropNextResponse(): the request reaches the target, its answer is dropped with the connection, once', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const check = redis.client()
  t.teardown(() => check.disconnect())
  const a = await connect(proxy.port)
  proxy.dropNextResponse()
  t.equal(await a.send('SET dropped yes\r\n'), 'closed', 'the client sees its connection close, not the answer')
  t.equal(await check.get('dropped'), 'yes', 'the request itself reached the target')
  const b = await connect(proxy.port)
  t.same(await b.send('PING\r\n'), { reply: '+PONG' }, 'only one answer is dropped')
  b.destroy()
})

t.test("'reset' drops open connections and refuses new ones until heal()", async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const open = await connect(proxy.port)
  t.same(await open.send('PING\r\n'), { reply: '+PONG' })

  proxy.cut('reset')
  t.equal(proxy.isCut, true)
  await open.closed
  t.equal(await open.send('PING\r\n'), 'closed', 'the open connection was destroyed')
  const refused = await connect(proxy.port)
  await refused.closed
  t.equal(await refused.send('PING\r\n'), 'closed', 'a new connection is accepted and destroyed at once')

  proxy.heal()
  t.equal(proxy.isCut, false)
  const healed = await connect(proxy.port)
  t.same(await healed.send('PING\r\n'), { reply: '+PONG' }, 'forwarding again after heal')
  healed.destroy()
})

t.test("'silent' stalls every connection (old and new) without closing it; heal() destroys the stalled ones", async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const old = await connect(proxy.port)
  t.same(await old.send('PING\r\n'), { reply: '+PONG' })

  proxy.cut('silent')
  t.equal(await old.send('SET stalled 1\r\n'), 'silence', 'nothing comes back on an open connection')
  const fresh = await connect(proxy.port)
  t.equal(await fresh.send('PING\r\n'), 'silence', 'a new connection is accepted and stalled')
  const direct = redis.client()
  t.teardown(() => direct.disconnect())
  t.equal(await direct.get('stalled'), null, 'the command never reached the server')

  await redis.restart()
  t.equal(await old.send('PING\r\n', 200), 'silence', 'the target going away is not visible through a silent cut')

  proxy.heal()
  await Promise.all([old.closed, fresh.closed])
  t.pass('stalled connections are destroyed on heal')
  const healed = await connect(proxy.port)
  t.same(await healed.send('PING\r\n'), { reply: '+PONG' })
  healed.destroy()
})

t.test('close() ends the listener and every connection; only loopback targets', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port })
  const open = await connect(proxy.port)
  await proxy.close()
  await open.closed
  const after = await new Promise<string>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: proxy.port })
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
    s.once('connect', () => {
      s.destroy()
      resolve('connected')
    })
  })
  t.equal(after, 'ECONNREFUSED')
  await t.rejects(startProxy({ host: '10.0.0.1', port: redis.port }), /loopback/)
})

t.test('setLatency delays each direction and keeps the bytes in order; lifted, forwarding is direct again', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const socket = net.connect({ host: '127.0.0.1', port: proxy.port })
  t.teardown(() => socket.destroy())
  socket.setEncoding('utf8')
  await new Promise((resolve) => socket.once('connect', resolve))
  let received = ''
  socket.on('data', (chunk: string) => (received += chunk))
  const replies = (n: number) =>
    new Promise<string[]>((resolve) => {
      const check = () => {
        const lines = received.split('\r\n').filter((l) => l.startsWith('$') === false && l !== '')
        if (lines.length < n) return void setTimeout(check, 5)
        received = ''
        resolve(lines)
      }
      check()
    })

  proxy.setLatency({ up: { ms: 20, jitterMs: 60 }, down: { ms: 100 } })
  t.same(proxy.latency, { up: { ms: 20, jitterMs: 60 }, down: { ms: 100 } })
  const sentAt = performance.now()
  // Separate chunks, each with its own jitter draw: a later one must still arrive after an earlier one.
  for (let i = 0; i < 10; i++) {
    socket.write(`ECHO m${i}\r\n`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  const first = await replies(10)
  t.ok(performance.now() - sentAt >= 120, 'at least the up and down delays (20 + 100 ms)')
  t.same(
    first,
    Array.from({ length: 10 }, (_, i) => `m${i}`),
    'in the order sent',
  )

  proxy.setLatency(undefined)
  t.equal(proxy.latency, undefined)
  socket.write('PING\r\n')
  t.same(await replies(1), ['+PONG'])
})
