import t from 'tap'
import { startRedisCluster } from '../../harness/redis-server.js'
import { exclusiveSuite } from '../suites/exclusive.js'

for (const n of [3, 5]) {
  t.test(`exclusive locks on a quorum of ${n} Redis masters`, async (t) => {
    const nodes = await startRedisCluster(n, { t })
    await exclusiveSuite(
      t,
      nodes.map((r) => r.url),
    )
  })
}
