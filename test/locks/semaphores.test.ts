import t from 'tap'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { semaphoreSuite } from '../suites/semaphore.js'

t.test('semaphores on one Redis', async (t) => {
  await semaphoreSuite(t, [await startRedis({ t })])
})

t.test('semaphores on a quorum of 3', async (t) => {
  await semaphoreSuite(t, await startRedisCluster(3, { t }))
})
