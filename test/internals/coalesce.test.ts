import type { Socket } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { coalescingFrom, coalescings, holdBehindFor, WriteCoalescer } from '../../src/redis/coalesce.js'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

/** A script that keeps Redis busy for about `ms` (so that the commands after it wait for their replies). */
const BUSY =
  "local t0 = redis.call('TIME') repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > tonumber(ARGV[1]) * 1000 return 1"

for (const holdBehind of [holdBehindFor(1), holdBehindFor(3)]) {
  t.test(`behind ${holdBehind} unanswered: commands go out together at the end of the turn, in order`, async (t) => {
    const redis = await startRedis({ t })
    const client = redis.client()
    t.teardown(() => client.disconnect())
    await client.ping()
    const stream = (client as unknown as { stream: Socket }).stream
    const queue = (client as unknown as { commandQueue: { length: number } }).commandQueue
    const writes = new WriteCoalescer(client, holdBehind)

    // Nothing in flight: written at once (a script that keeps Redis busy, so the rest wait behind it).
    writes.beforeWrite()
    t.equal(stream.writableCorked, 0, 'an idle connection writes at once')
    const busy = client.eval(BUSY, 0, 30)

    // Fewer than holdBehind commands in flight: still written at once (Redis gets to work on them).
    const ahead: Promise<number>[] = []
    while (queue.length < holdBehind) {
      writes.beforeWrite()
      t.equal(stream.writableCorked, 0, `written at once behind ${queue.length} commands`)
      ahead.push(client.incr('n'))
    }
    // A backlog of holdBehind: the next ones are held back until the turn ends.
    const later: Promise<number>[] = []
    for (let i = 0; i < 10; i++) {
      writes.beforeWrite()
      later.push(client.incr('n'))
    }
    t.equal(stream.writableCorked, 1, `held back behind ${holdBehind}`)
    t.ok(stream.writableLength > 0, 'the held commands wait in the socket buffer')
    await nextTurn()
    t.equal(stream.writableCorked, 0, 'written when the turn ends')
    t.equal(await busy, 1)
    const n = ahead.length + later.length
    t.equal(n, holdBehind - 1 + 10)
    t.same(
      await Promise.all([...ahead, ...later]),
      Array.from({ length: n }, (_, i) => i + 1),
      'every command answered, in the order sent',
    )
    t.equal(Number(await client.get('n')), n)
  })
}

t.test('a lone node holds back behind a longer backlog than each node of a quorum', async (t) => {
  t.ok(holdBehindFor(1) > holdBehindFor(3), 'a quorum batches sooner: its writes are N times as many')
  t.equal(holdBehindFor(5), holdBehindFor(3))
  t.ok(holdBehindFor(3) >= 1, 'an idle connection always writes at once')
})

t.test('a connection that fails while holding commands back fails them: no command hangs', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client({ commandTimeout: 500, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => undefined)
  t.teardown(() => client.disconnect())
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  const holdBehind = holdBehindFor(1)
  const writes = new WriteCoalescer(client, holdBehind)
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      () => 'failed',
    )
  // A backlog: a slow script, and commands behind it to make holdBehind.
  const busy = [outcome(client.eval(BUSY, 0, 200))]
  while (busy.length < holdBehind) busy.push(outcome(client.incr('m')))
  const held: Promise<string>[] = []
  for (let i = 0; i < 5; i++) {
    writes.beforeWrite()
    held.push(outcome(client.incr('n')))
  }
  t.equal((client as unknown as { stream: Socket }).stream.writableCorked, 1, 'the last five are held back')
  await redis.kill()
  const started = Date.now()
  const outcomes = await Promise.all([...busy, ...held])
  t.same(outcomes, Array(holdBehind + 5).fill('failed'), 'every command in flight or held back fails')
  t.ok(Date.now() - started < 5000, 'and fails within the command timeout, not later')
})

t.test('LOCK_SERVICE_BENCH_COALESCING: the bench switch between ours, ioredis auto-pipelining and none', async (t) => {
  t.equal(coalescingFrom({}), 'ours', 'ours unless the bench says otherwise')
  t.equal(coalescingFrom({ LOCK_SERVICE_BENCH_COALESCING: 'auto' }), 'auto')
  t.throws(() => coalescingFrom({ LOCK_SERVICE_BENCH_COALESCING: 'fast' }), /must be one of ours, auto, none \(got "fast"\)/)
  const redis = await startRedis({ t })
  const admin = redis.client()
  t.teardown(() => admin.disconnect())
  const was = process.env.LOCK_SERVICE_BENCH_COALESCING
  t.teardown(() => {
    if (was === undefined) delete process.env.LOCK_SERVICE_BENCH_COALESCING
    else process.env.LOCK_SERVICE_BENCH_COALESCING = was
  })
  for (const coalescing of coalescings) {
    process.env.LOCK_SERVICE_BENCH_COALESCING = coalescing
    const { app } = await startApp(t, [redis.url])
    const headers = { 'lock-token': `token-${coalescing}-000000000000` }
    const lock = async (method: 'POST' | 'DELETE') => (await app.inject({ method, url: `/locks/k-${coalescing}`, headers })).statusCode
    t.equal(await lock('POST'), 201, `${coalescing}: granted`)
    t.equal(await lock('DELETE'), 200, `${coalescing}: released`)
    await admin.script('FLUSH')
    t.equal(await lock('POST'), 201, `${coalescing}: granted after SCRIPT FLUSH (NOSCRIPT, then the script in full)`)
    const pipelining = (app.quorum.nodes[0]?.client.options as { enableAutoPipelining?: boolean }).enableAutoPipelining === true
    t.equal(pipelining, coalescing === 'auto', `${coalescing}: ioredis auto-pipelining ${coalescing === 'auto' ? 'on' : 'off'}`)
  }
})
