import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { lockKeys } from '../../src/locks/keys.js'
import { startApp } from '../../harness/app.js'
import { startRedisCluster } from '../../harness/redis-server.js'
import { lockDelaySuite } from '../suites/lock-delay.js'
import { until } from '../helpers/until.js'

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

t.test('a node restarted empty sits out the lock-delays it forgot, not only the holds', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const [, b, c] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]]
  // A short MAX_TTL_MS: a quarantine of MAX_TTL_MS alone would be over ~1–3 s after B's restart,
  // while the delay below runs ~6.5 s after the grant.
  const MAX_TTL = 1000
  const DELAY = 6000
  const { app, config } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: 250, maxTtlMs: MAX_TTL, defaultTtlMs: MAX_TTL, maxLockDelayMs: DELAY, logLevel: 'warn' },
  )
  const key = 'restart-forgets-delay'
  const granted = await app.inject({ method: 'POST', url: `/locks/${key}?ttl=500&lockDelay=${DELAY}` })
  t.equal(granted.statusCode, 201, 'held with a lock-delay, then abandoned')
  const grantedAt = Date.now()
  // C missed the grant (its hold and delay entries are gone); B restarts empty: A alone remembers the delay.
  const cClient = c.client()
  await cClient.del(...lockKeys(config.keyPrefix, 'lock', key).all)
  await cClient.quit()
  await b.kill()
  await b.restart()
  const restartedAt = Date.now()
  await until(async () => {
    const node = (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[1]
    return node.up === true && node.vote !== 'identifying'
  }, 'B reconnected and identified')
  const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
  t.ok(
    ready.nodes[1].quarantineMs > MAX_TTL * 2,
    `B is quarantined for ${ready.nodes[1].quarantineMs} ms: (MAX_TTL_MS + MAX_LOCK_DELAY_MS) × (1 + DRIFT_FACTOR) from its start`,
  )
  // Past any quarantine of MAX_TTL_MS alone (its start as INFO tells it may read up to 2 s early),
  // within the delay: B and C (both empty) would be a majority.
  await sleep(Math.max(0, restartedAt + MAX_TTL * 1.01 + 2500 - Date.now()))
  t.ok(Date.now() < grantedAt + 500 + DELAY - 1000, 'still within the delay')
  const within = await app.inject({ method: 'POST', url: `/locks/${key}` })
  // A refuses (its delay), B does not vote, C alone grants: no majority either way, and the one
  // refusal is a delay (nothing holds the lock): lock_delayed, not lock_held.
  const refusal = within.json() as { error: string; retryAfterMs: number }
  t.equal(within.statusCode, 409, `not granted within the delay (${within.statusCode} ${refusal.error})`)
  t.equal(refusal.error, 'lock_delayed', 'refused for the delay A kept')
  t.ok(
    Date.now() + refusal.retryAfterMs >= grantedAt + 500 + DELAY - 100,
    `retry after ${refusal.retryAfterMs} ms: when A's delay ends, not before`,
  )
  // Once the delay and B's quarantine are over, the lock is granted again.
  await until(
    async () => (await app.inject({ method: 'POST', url: `/locks/${key}` })).statusCode === 201,
    'granted after the delay and the quarantine',
    15_000,
  )
  t.ok(Date.now() >= grantedAt + 500 + DELAY - 100, 'not before the delay ended')
})
