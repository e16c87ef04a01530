import type { Socket } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { coalescingFrom, coalescings, holdRuleFor, WriteCoalescer } from '../../src/redis/coalesce.js'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

/** A script that keeps Redis busy for about `ms` (so that the commands after it wait for their replies). */
const BUSY =
  "local t0 = redis.call('TIME') repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > tonumber(ARGV[1]) * 1000 return 1"

/** A client on a fresh Redis, its socket, and a count of the writes that reach the socket's kernel side. */
async function connection(t: Test) {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  const stream = (client as unknown as { stream: Socket }).stream
  const queue = (client as unknown as { commandQueue: { length: number } }).commandQueue
  const counted = { writes: 0 }
  const socket = stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>
  for (const name of ['_write', '_writev'] as const) {
    const original = socket[name].bind(stream)
    socket[name] = (...args: unknown[]) => {
      counted.writes++
      return original(...args)
    }
  }
  return { client, stream, queue, counted }
}

for (const nodes of [1, 3]) {
  const rule = holdRuleFor(nodes)
  const who = nodes === 1 ? 'a lone node' : 'each node of a quorum'
  t.test(`${who}: a turn's first command goes out at once, the rest together (${rule.batch} at most), in order`, async (t) => {
    const { client, stream, counted } = await connection(t)
    const writes = new WriteCoalescer(client, rule)
    const send = <T>(command: () => Promise<T>): Promise<T> => {
      writes.beforeWrite()
      const reply = command()
      writes.afterWrite()
      return reply
    }

    // A script that keeps Redis busy, so that the rest wait behind it.
    const busy = send(() => client.eval(BUSY, 0, 30))
    t.equal(counted.writes, 1, "the turn's first command: written at once")
    t.equal(stream.writableCorked, 0)
    const later: Promise<number>[] = []
    for (let i = 0; i < 10; i++) later.push(send(() => client.incr('n')))
    const fullBatches = Math.floor(10 / rule.batch)
    const batches = fullBatches + (10 % rule.batch === 0 ? 0 : 1)
    t.equal(counted.writes, 1 + fullBatches, `the next 10: ${fullBatches} full batch(es) written, one write each`)
    t.equal(stream.writableCorked, 10 % rule.batch === 0 ? 0 : 1, 'the rest held back')
    t.ok(stream.writableLength > 0, 'the held commands wait in the socket buffer')
    await nextTurn()
    t.equal(stream.writableCorked, 0, 'written when the turn ends')
    t.equal(counted.writes, 1 + batches, 'the rest in one write')
    t.equal(await busy, 1)
    t.same(
      await Promise.all(later),
      Array.from({ length: 10 }, (_, i) => i + 1),
      'every command answered, in the order sent',
    )

    // The next turn: its first command goes out at once again.
    const next = send(() => client.incr('n'))
    t.equal(counted.writes, 2 + batches, "the next turn's first command: written at once")
    t.equal(await next, 11)
  })

  t.test(`${who}: behind a backlog of ${rule.holdBehind} unanswered, even a turn's first command is held back`, async (t) => {
    const { client, stream, queue } = await connection(t)
    const writes = new WriteCoalescer(client, rule)
    const ahead: Promise<unknown>[] = [client.eval(BUSY, 0, 200)]
    while (queue.length < rule.holdBehind) ahead.push(client.incr('n'))
    await nextTurn()
    t.ok(queue.length >= rule.holdBehind, 'Redis is still busy with them')
    writes.beforeWrite()
    const held = client.incr('n')
    writes.afterWrite()
    t.equal(stream.writableCorked, rule.batch > 1 ? 1 : 0, 'held back')
    await nextTurn()
    t.equal(stream.writableCorked, 0, 'written when the turn ends')
    await Promise.all(ahead)
    t.equal(await held, rule.holdBehind, 'answered after the backlog, in order')
  })
}

t.test('a lone node holds back later and in smaller batches than each node of a quorum', async (t) => {
  const lone = holdRuleFor(1)
  const quorum = holdRuleFor(3)
  t.ok(lone.holdBehind > quorum.holdBehind, 'a quorum batches sooner: its writes are N times as many')
  t.ok(lone.batch < quorum.batch, 'a lone node keeps its Redis fed through a burst')
  t.same(holdRuleFor(5), quorum)
  t.ok(quorum.holdBehind >= 1, 'an idle connection always writes at once')
  t.ok(lone.batch > 1, 'held commands share a write')
})

t.test('a connection that fails while holding commands back fails them: no command hangs', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client({ commandTimeout: 500, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => undefined)
  t.teardown(() => client.disconnect())
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  const rule = holdRuleFor(1)
  const holdBehind = rule.holdBehind
  const writes = new WriteCoalescer(client, { ...rule, batch: Infinity })
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
