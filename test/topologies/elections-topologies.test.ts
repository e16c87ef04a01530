import t from 'tap'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'
import { startSentinelSet } from '../../harness/redis-sentinel.js'
import { electionSuite } from '../suites/election.js'

// Elections on the two topologies whose quorum is one voter: each election's keys (its hold's and its
// meta hash) share the name's hash tag, so every election script runs on the master of that slot.
t.test('elections on a Redis Cluster of 3 masters + 3 replicas', async (t) => {
  const cluster = await startRedisClusterMode({ t })
  await electionSuite(t, cluster.urls, { redisMode: 'cluster' })
})

t.test('elections on a Sentinel-managed primary', async (t) => {
  const set = await startSentinelSet({ t })
  await electionSuite(t, [], { redisMode: 'sentinel', sentinel: set.config })
})
