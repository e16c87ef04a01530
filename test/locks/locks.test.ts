import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { exclusiveSuite } from '../suites/exclusive.js'

t.test('exclusive locks on one Redis', async (t) => {
  const redis = await startRedis({ t })
  await exclusiveSuite(t, [redis.url])
})
