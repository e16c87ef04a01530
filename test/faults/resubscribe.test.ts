/**
 * After a reconnect ioredis subscribes again by itself and drops that SUBSCRIBE's promise; a connection
 * lost before its reply would reject it with nobody listening, and an unhandled rejection ends a Node
 * process. A replica's wake-up subscription must survive that, and subscribe again on the next connect.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { subscribe } from '../../src/redis/pubsub-scan.js'
import { startRedis } from '../../harness/redis-server.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import { until } from '../helpers/until.js'

t.test('a subscription whose automatic re-SUBSCRIBE loses its connection: no unhandled rejection, and it subscribes again', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  const client = new Redis(proxy.url, { maxRetriesPerRequest: 0, retryStrategy: () => 20 })
  t.teardown(() => client.disconnect())
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => process.off('unhandledRejection', onUnhandled))

  const messages: string[] = []
  let reconnects = 0
  const sub = subscribe(
    client,
    'wake',
    (message) => messages.push(message),
    () => {
      // The first reconnect: its automatic SUBSCRIBE reaches Redis, the answer never comes back.
      if (++reconnects === 1) proxy.dropNextResponse()
    },
  )
  t.teardown(() => sub.close())
  await sub.subscribed
  proxy.cut('reset')
  proxy.heal()
  await until(async () => reconnects >= 2, 'connected again after the lost SUBSCRIBE', 5000, 20)
  const publisher = redis.client()
  t.teardown(() => publisher.quit())
  await until(async () => (await publisher.publish('wake', 'after')) === 1, 'subscribed again', 5000, 20)
  await until(async () => messages.includes('after'), 'the push arrives', 2000, 20)
  t.same(unhandled, [], 'no unhandled rejection')
})
