import t from 'tap'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { contendOnNewApp } from '../helpers/contenders.js'
import { rwlockSuite } from '../suites/rwlock.js'

t.test('read-write locks on one Redis', async (t) => {
  await rwlockSuite(t, [await startRedis({ t })])
})

t.test('read-write locks on a quorum of 3', async (t) => {
  await rwlockSuite(t, await startRedisCluster(3, { t }))
})

for (const n of [1, 3]) {
  t.test(`many readers and some writers contending (N = ${n}): reads may share, writes overlap nothing`, async (t) => {
    const { stats, history } = await contendOnNewApp(t, n, {
      keys: ['rw-hot'],
      clients: 16,
      durationMs: 3000,
      ttlMs: 2000,
      // Clients 0–12 read, 13–15 write: 90/10-ish by attempts.
      pickMode: (client) => (client < 13 ? 'read' : 'write'),
      holdMs: () => Math.random() * 3,
      // Without waiting in line (a later feature), a steady stream of readers would starve writers.
      thinkMs: () => 5 + Math.random() * 10,
    })
    t.same(stats.unexpected, [])
    const holds = history.size
    t.ok(holds >= 100, `${stats.grants} grants (${JSON.stringify(stats.grantsByMode)}), ${stats.conflicts} conflicts`)
    t.ok((stats.grantsByMode.write ?? 0) > 0 && (stats.grantsByMode.read ?? 0) > 0, 'both readers and writers got in')
    history.assertSafe(t, `read-write, 13 readers + 3 writers, N = ${n}`)
  })
}

t.test('no writer starvation: with waiting, writers get in under a steady stream of readers', async (t) => {
  const { stats, history } = await contendOnNewApp(t, 1, {
    keys: ['rw-starve'],
    clients: 16,
    durationMs: 3000,
    ttlMs: 2000,
    waitMs: 5000,
    pickMode: (client) => (client < 13 ? 'read' : 'write'),
    holdMs: () => 1 + Math.random() * 3,
  })
  t.same(stats.unexpected, [])
  t.equal(stats.conflicts, 0, 'nobody gave up')
  t.ok((stats.grantsByMode.write ?? 0) >= 10, `writers were not starved: ${JSON.stringify(stats.grantsByMode)}`)
  history.assertSafe(t, 'read-write with waiting, 13 readers + 3 writers')
})
