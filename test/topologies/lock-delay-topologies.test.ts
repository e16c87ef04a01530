import t from 'tap'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'
import { startSentinelSet } from '../../harness/redis-sentinel.js'
import { lockDelaySuite } from '../suites/lock-delay.js'

// The delay's key carries the lock's hash tag, so it lives on the lock's master: the same suite as on one Redis.
t.test('lock-delay on a Redis Cluster of 3 masters + 3 replicas', async (t) => {
  const cluster = await startRedisClusterMode({ t })
  const figures = await lockDelaySuite(t, cluster.urls, { redisMode: 'cluster' })
  t.test('figures', async (t) => {
    t.comment(`cluster: waiter served after the delay's end: ${figures.waiterLatencyMs.join(', ')} ms`)
    t.equal(figures.waiterLatencyMs.length, 3)
  })
})

t.test('lock-delay on a Sentinel-managed primary', async (t) => {
  const set = await startSentinelSet({ t })
  const figures = await lockDelaySuite(t, [], { redisMode: 'sentinel', sentinel: set.config })
  t.test('figures', async (t) => {
    t.comment(`sentinel: waiter served after the delay's end: ${figures.waiterLatencyMs.join(', ')} ms`)
    t.equal(figures.waiterLatencyMs.length, 3)
  })
})
