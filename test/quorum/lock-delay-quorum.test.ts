import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedisCluster } from '../../harness/redis-server.js'
import { lockDelaySuite } from '../suites/lock-delay.js'

t.test('lock-delay on a quorum of 3', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const figures = await lockDelaySuite(
    t,
    nodes.map((n) => n.url),
  )
  t.test('figures', async (t) => {
    t.comment(`quorum of 3: waiter served after the delay's end: ${figures.waiterLatencyMs.join(', ')} ms`)
    t.equal(figures.waiterLatencyMs.length, 3)
  })

  t.test('a majority decides: a delay on one node of three refuses nothing; on two, it refuses', async (t) => {
    const { app, config } = await startApp(
      t,
      nodes.map((n) => n.url),
      { logLevel: 'warn' },
    )
    const clients = nodes.map((n) => n.client())
    t.teardown(() => Promise.all(clients.map((c) => c.quit())))
    const put = async (key: string, on: number[]) => {
      const delays = `${config.keyPrefix}lock:{${key}}:delay`
      for (const i of on) {
        const c = clients[i]
        if (!c) throw new Error(`no node ${i}`)
        // As include/delay.lua writes it: a write hold that lapsed unreleased, its delay running 3 s more.
        const until = Date.now() + 3000
        await c.hset(delays, 'w', `${until}|3000|`)
        await c.pexpireat(delays, until)
      }
    }
    const acquire = (key: string) =>
      app.inject({ method: 'POST', url: `/locks/${key}`, headers: { 'lock-token': 'majority-delay-token-0123' }, payload: { ttlMs: 1000 } })
    await put('one-node', [0])
    t.equal((await acquire('one-node')).statusCode, 201, 'one node of three in a delay: granted')
    await put('two-nodes', [0, 2])
    const refused = await acquire('two-nodes')
    t.equal(refused.statusCode, 409)
    t.equal(refused.json().error, 'lock_delayed', 'two of three: lock_delayed')
  })
})
