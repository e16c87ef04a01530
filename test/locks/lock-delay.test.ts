import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { lockDelaySuite } from '../suites/lock-delay.js'

t.test('lock-delay on one Redis', async (t) => {
  const figures = await lockDelaySuite(t, [(await startRedis({ t })).url])
  t.test('figures', async (t) => {
    t.comment(`waiter served after the delay's end: ${figures.waiterLatencyMs.join(', ')} ms`)
    t.equal(figures.waiterLatencyMs.length, 3)
  })
})
