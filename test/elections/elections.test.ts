import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { electionSuite } from '../suites/election.js'

t.test('elections on one Redis', async (t) => {
  const redis = await startRedis({ t })
  await electionSuite(t, [redis.url])
})
