import t from 'tap'
import { startRedisCluster } from '../../harness/redis-server.js'
import { sessionSuite } from '../suites/session.js'

t.test('sessions on a quorum of 3', async (t) => {
  await sessionSuite(t, await startRedisCluster(3, { t }))
})
