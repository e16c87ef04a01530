import type { Socket } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { WriteCoalescer } from '../src/redis/coalesce.js'
import { startRedis } from './helpers/redis-server.js'

/** A script that keeps Redis busy for about `ms` (so that the commands after it wait for their replies). */
const BUSY =
  "local t0 = redis.call('TIME') repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > tonumber(ARGV[1]) * 1000 return 1"

t.test('commands sent while replies are pending go out together at the end of the turn, in order', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  const stream = (client as unknown as { stream: Socket }).stream
  const writes = new WriteCoalescer(client)

  // Nothing in flight: written at once.
  writes.beforeWrite()
  t.equal(stream.writableCorked, 0, 'an idle connection writes at once')
  const first = client.incr('n')

  // One command in flight: the next ones are held back until the turn ends.
  const busy = client.eval(BUSY, 0, 30)
  const later: Promise<number>[] = []
  for (let i = 0; i < 10; i++) {
    writes.beforeWrite()
    later.push(client.incr('n'))
  }
  t.equal(stream.writableCorked, 1, 'held back while replies are pending')
  t.ok(stream.writableLength > 0, 'the held commands wait in the socket buffer')
  await nextTurn()
  t.equal(stream.writableCorked, 0, 'written when the turn ends')
  t.equal(await first, 1)
  t.equal(await busy, 1)
  t.same(await Promise.all(later), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 'every command answered, in the order sent')
  t.equal(Number(await client.get('n')), 11)
})

t.test('a connection that fails while holding commands back fails them: no command hangs', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client({ commandTimeout: 500, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => undefined)
  t.teardown(() => client.disconnect())
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  const writes = new WriteCoalescer(client)
  const busy = client.eval(BUSY, 0, 200).then(
    () => 'answered',
    () => 'failed',
  )
  const held: Promise<string>[] = []
  for (let i = 0; i < 5; i++) {
    writes.beforeWrite()
    held.push(
      client.incr('n').then(
        () => 'answered',
        () => 'failed',
      ),
    )
  }
  await redis.kill()
  const started = Date.now()
  const outcomes = await Promise.all([busy, ...held])
  t.same(outcomes, Array(6).fill('failed'), 'every command in flight or held back fails')
  t.ok(Date.now() - started < 5000, 'and fails within the command timeout, not later')
})
