import { performance } from 'node:perf_hooks'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { configFrom } from '../../src/config.js'
import { lockKeys } from '../../src/locks/keys.js'
import { startApp, startListening } from '../../harness/app.js'
import { contend } from '../helpers/contenders.js'
import { History } from '../../harness/history.js'
import { startRedisClusterMode, type RedisClusterProcesses } from '../../harness/redis-cluster.js'
import { startRedis } from '../../harness/redis-server.js'
import { startReplicas } from '../../harness/service-process.js'
import { until } from '../helpers/until.js'
import { lineAcrossReplicas } from '../helpers/line.js'

const cluster = (overrides = {}) => ({ redisMode: 'cluster' as const, logLevel: 'warn', ...overrides })
const tok = (name: string) => `${name}-cluster-token-000000`

/** The master ports serving the slots of `keys` (/locks namespace). */
async function mastersOf(redis: RedisClusterProcesses, keys: readonly string[]): Promise<Set<number>> {
  const client = redis.client()
  try {
    const ports = new Set<number>()
    for (const key of keys) {
      const slot = (await client.cluster('KEYSLOT', lockKeys('lock-service:', 'lock', key).holds)) as number
      ports.add((await redis.masterOf(slot)).port)
    }
    return ports
  } finally {
    client.disconnect()
  }
}

t.test('a Redis Cluster of 3 masters + 3 replicas', async (t) => {
  const redis = await startRedisClusterMode({ t })
  const keys = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']

  t.test('the keys of the contention tests live on every master', async (t) => {
    t.equal((await mastersOf(redis, keys)).size, 3)
  })

  t.test('contention across slots on every master: no overlap, fences increase (history-checked)', async (t) => {
    const { address } = await startListening(t, redis.urls, cluster())
    const history = new History()
    const stats = await contend({ baseUrls: [address], history, keys, clients: 12, durationMs: 2500, ttlMs: 2000 })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 100, `${stats.grants} grants, ${stats.conflicts} conflicts`)
    history.assertSafe(t)
  })

  t.test('waiting in line with hand-off, read-write mix: history-checked', async (t) => {
    const { address } = await startListening(t, redis.urls, cluster())
    const history = new History()
    const stats = await contend({
      baseUrls: [address],
      history,
      keys: keys.slice(0, 3),
      clients: 12,
      durationMs: 2500,
      ttlMs: 2000,
      waitMs: 2000,
      pickMode: (c) => (c % 3 === 0 ? 'write' : 'read'),
    })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 30, `${stats.grants} grants (${JSON.stringify(stats.grantsByMode)})`)
    history.assertSafe(t)
  })

  t.test('two service replicas: a waiter on one is handed the lock released on the other, first come first served', async (t) => {
    const [a, b] = await startReplicas(redis.urls, { t, env: { REDIS_MODE: 'cluster' } })
    for (const key of keys.slice(0, 3)) {
      const path = `/locks/line-${key}`
      const { first: got, second: next } = await lineAcrossReplicas(t, a.url, b.url, path, tok)
      t.ok((next.body.fence as number) > (got.body.fence as number), 'fences increase along the line')
    }
    const history = new History()
    const stats = await contend({ baseUrls: [a.url, b.url], history, keys, clients: 10, durationMs: 2500, ttlMs: 2000, waitMs: 2000 })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 50, `${stats.grants} grants through two replicas`)
    history.assertSafe(t)
  })

  t.test('admin listing pages across every master; force-release; readiness and metrics', async (t) => {
    const { app } = await startApp(t, redis.urls, cluster())
    const listed = Array.from({ length: 40 }, (_, i) => `list-${i}`)
    for (const key of listed) t.equal((await app.inject({ method: 'POST', url: `/locks/${key}?ttl=30s` })).statusCode, 201)
    t.equal((await mastersOf(redis, listed)).size, 3, 'the listed keys live on all three masters')
    const seen = new Set<string>()
    let cursor: string | null = ''
    let pages = 0
    while (cursor !== null && pages < 100) {
      const res = await app.inject({ method: 'GET', url: `/locks?prefix=list-&limit=7${cursor ? `&cursor=${cursor}` : ''}` })
      t.equal(res.statusCode, 200)
      const page = res.json() as { items: { key: string }[]; cursor: string | null }
      for (const item of page.items) seen.add(item.key)
      if (page.cursor !== null) t.match(page.cursor, /^0\.\d+\.\d+$/, 'the cursor names the master by its first slot')
      cursor = page.cursor
      pages++
    }
    t.equal(cursor, null, `the scan completed in ${pages} pages`)
    t.same([...seen].sort(), [...listed].sort(), 'every key on every master was listed')

    const forced = await app.inject({ method: 'DELETE', url: '/locks/list-3?force=true' })
    t.equal(forced.statusCode, 200, 'force-release')
    t.equal((await app.inject({ method: 'GET', url: '/locks/list-3' })).statusCode, 404)

    const ready = await app.inject({ method: 'GET', url: '/readyz' })
    t.equal(ready.statusCode, 200)
    t.equal(ready.json().nodes.length, 1, 'the cluster is one voter')
    t.equal(ready.json().nodes[0].vote, 'counts')
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    t.match(metrics, /redis_node_command_duration_seconds_count\{node="0"\} [1-9]/, 'commands are timed')
    t.match(metrics, /^redis_cluster_masters 3$/m, 'three masters serve the slots')
    for (const shard of [0, 1, 2])
      t.match(metrics, new RegExp(`^redis_cluster_master_up\\{shard="${shard}"\\} 1$`, 'm'), `shard ${shard} answers`)
    // A rate needs two samples (one a second).
    await until(
      async () =>
        /^redis_cluster_master_clock_rate\{shard="2"\} [01]\.\d/m.test((await app.inject({ method: 'GET', url: '/metrics' })).body),
      'a clock rate per master',
    )
  })

  t.test('REDIS_WAIT_REPLICAS: 1 (each master has one replica) grants; 2 cannot be confirmed: 503, rolled back', async (t) => {
    const confirmed = await startApp(t, redis.urls, cluster({ waitReplicas: 1 }))
    for (const key of keys) {
      const res = await confirmed.app.inject({ method: 'POST', url: `/locks/wait1-${key}?ttl=5s`, headers: { 'lock-token': tok('w1') } })
      t.equal(res.statusCode, 201, `${key}: confirmed by its master's replica`)
      const renewed = await confirmed.app.inject({ method: 'PUT', url: `/locks/wait1-${key}/renew`, headers: { 'lock-token': tok('w1') } })
      t.equal(renewed.statusCode, 200, 'renew confirmed too')
    }
    const unconfirmable = await startApp(t, redis.urls, cluster({ waitReplicas: 2, nodeTimeoutMs: 300 }))
    const started = performance.now()
    const res = await unconfirmable.app.inject({ method: 'POST', url: '/locks/wait2?ttl=5s', headers: { 'lock-token': tok('w2') } })
    t.equal(res.statusCode, 503)
    t.equal(res.json().error, 'backend_unavailable')
    t.ok(performance.now() - started < 2000, 'within the node timeout budget')
    await until(
      async () => (await confirmed.app.inject({ method: 'GET', url: '/locks/wait2' })).statusCode === 404,
      'the unconfirmed grant was rolled back',
      2000,
    )
  })
})

t.test('start errors name the wrong mode', async (t) => {
  const plain = await startRedis({ t })
  const config = configFrom({ redisMode: 'cluster', redisUrls: [plain.url], logLevel: 'silent', nodeTimeoutMs: 300 })
  await t.rejects(buildApp(config), /REDIS_MODE=cluster, but 127\.0\.0\.1:\d+ has cluster support disabled/)
  const redis = await startRedisClusterMode({ t, masters: 3, replicasPerMaster: 0 })
  const standalone = configFrom({ redisUrls: [redis.urls[0]!], logLevel: 'silent', nodeTimeoutMs: 300 })
  await t.rejects(buildApp(standalone), /part of a Redis Cluster \(cluster_enabled:1\): set REDIS_MODE=cluster/)
})
