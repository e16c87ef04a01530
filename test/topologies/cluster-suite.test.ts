import t from 'tap'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'
import { exclusiveSuite } from '../suites/exclusive.js'
import { rwlockSuite } from '../suites/rwlock.js'

// One Redis Cluster (3 masters + 3 replicas) for both suites: the service is one voter (the cluster),
// each lock's scripts run on the master of its hash tag's slot.
t.test('exclusive and read-write locks on a Redis Cluster of 3 masters + 3 replicas', async (t) => {
  const cluster = await startRedisClusterMode({ t })
  t.test('exclusive', (t) => exclusiveSuite(t, cluster.urls, { redisMode: 'cluster' }))
  t.test('read-write', (t) => rwlockSuite(t, cluster.nodes, { overrides: { redisMode: 'cluster' }, client: () => cluster.client() }))
})
