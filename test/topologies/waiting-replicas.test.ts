import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { startRedis, type RedisProcess } from '../../harness/redis-server.js'
import { startReplicas } from '../../harness/service-process.js'
import { request } from '../../harness/http.js'
import { contendOnNewReplicas } from '../helpers/contenders.js'
import { until } from '../helpers/until.js'

const tok = (name: string) => `${name}-replica-token-0000`

const waitersOn = async (base: string, path: string) => {
  const res = await request(base, 'GET', path)
  return res.status === 200 ? (res.body.waiters as number) : -1
}

t.test('two replicas wake each other’s waiters', async (t) => {
  const redis = await startRedis({ t })
  const [a, b] = await startReplicas([redis.url], { t })
  for (const [holderVia, waiterVia] of [
    [a, b],
    [b, a],
  ] as const) {
    const key = `/locks/cross-${holderVia.pid}`
    t.equal((await request(holderVia.url, 'POST', `${key}?ttl=30s`, { token: tok('holder') })).status, 201)
    const waiting = request(waiterVia.url, 'POST', `${key}?wait=10s`, { token: tok('waiter') })
    await until(async () => (await waitersOn(holderVia.url, key)) === 1, 'waiter in line')
    const released = performance.now()
    await request(holderVia.url, 'DELETE', key, { token: tok('holder') })
    const res = await waiting
    t.equal(res.status, 201, 'the waiter on the other replica got it')
    t.ok(performance.now() - released < 2000, 'handed over by the push, not by a timeout')
  }
})

/** Redis' count of replicas subscribed for pushes. */
async function subscribedReplicas(redis: RedisProcess): Promise<number> {
  const client = redis.client()
  try {
    return ((await client.pubsub('CHANNELS', 'lock-service:wake:*')) as string[]).length
  } finally {
    client.disconnect()
  }
}

/**
 * Two replicas on one Redis and a held lock with two waiters: first in line one parked on `doomed`,
 * second one parked on `survivor` (its answer: `second`).
 */
async function lineAcrossTwoReplicas(t: Test, key: string) {
  const redis = await startRedis({ t })
  const [doomed, survivor] = await startReplicas([redis.url], { t })
  await request(survivor.url, 'POST', `${key}?ttl=30s`, { token: tok('holder') })
  request(doomed.url, 'POST', `${key}?wait=30s`, { token: tok('doomed') }).catch(() => undefined)
  await until(async () => (await waitersOn(survivor.url, key)) === 1, 'first waiter in line')
  const second = request(survivor.url, 'POST', `${key}?wait=30s`, { token: tok('second') })
  await until(async () => (await waitersOn(survivor.url, key)) === 2, 'second waiter in line')
  return { redis, doomed, survivor, second }
}

t.test('a replica that dies: a release hands the lock past its waiter at once', async (t) => {
  const key = '/locks/crash'
  const { redis, doomed, survivor, second } = await lineAcrossTwoReplicas(t, key)
  await doomed.stop('SIGKILL')
  // Its connections closed with it; Redis notices within a moment.
  await until(async () => (await subscribedReplicas(redis)) === 1, 'Redis saw the dead replica go')
  const released = performance.now()
  await request(survivor.url, 'DELETE', key, { token: tok('holder') })
  const res = await second
  const took = performance.now() - released
  t.equal(res.status, 201, 'the second waiter is granted although the first one’s replica is gone')
  t.ok(took < 1000, `handed to the second waiter ${took.toFixed(0)} ms after the release (the push to the dead replica reached nobody)`)
  t.equal(await waitersOn(survivor.url, key), 0, 'the dead waiter left the line')
})

t.test('a replica cut off without closing its connections stops blocking the line within seconds', async (t) => {
  const key = '/locks/frozen'
  const { doomed: frozen, survivor, second } = await lineAcrossTwoReplicas(t, key)
  // SIGSTOP: the replica stops renewing its waiters' places, but its connections stay open, so a
  // push still "reaches" it. Past 1.5 s without a renewal, a release no longer hands it the lock.
  process.kill(frozen.pid, 'SIGSTOP')
  t.teardown(() => process.kill(frozen.pid, 'SIGCONT'))
  const frozenAt = performance.now()
  await sleep(1600)
  await request(survivor.url, 'DELETE', key, { token: tok('holder') })
  const res = await second
  const took = performance.now() - frozenAt
  t.equal(res.status, 201, 'the second waiter is granted, not the frozen one')
  t.ok(took < 6000, `line unblocked ${(took / 1000).toFixed(1)} s after the replica froze (its waiters' lease: 3 s, renewed every 1 s)`)
  t.equal(await waitersOn(survivor.url, key), 0, 'the frozen waiter left the line')
})

t.test('SIGTERM: parked waiters answer 503 shutting_down, leave the line, the replica exits 0', async (t) => {
  const redis = await startRedis({ t })
  const [leaving, staying] = await startReplicas([redis.url], { t })
  const key = '/locks/drain'
  await request(staying.url, 'POST', `${key}?ttl=30s`, { token: tok('holder') })
  const parked = [0, 1, 2].map((i) => request(leaving.url, 'POST', `${key}?wait=30s`, { token: tok(`p${i}`) }))
  await until(async () => (await waitersOn(staying.url, key)) === 3, 'three waiters in line')
  const started = performance.now()
  const exit = leaving.stop('SIGTERM')
  const answers = await Promise.all(parked)
  t.same(
    answers.map((r) => [r.status, r.body.error]),
    Array(3).fill([503, 'shutting_down']),
    'each parked waiter got 503 shutting_down',
  )
  t.equal(await exit, 0, 'exit code 0')
  t.ok(performance.now() - started < 10_000, 'within the 10 s shutdown bound')
  await until(async () => (await waitersOn(staying.url, key)) === 0, 'their places in line released')
  t.pass('their places in line were released')
})

t.test('waiting clients on a quorum of 3, through two replicas: safe, everyone served', async (t) => {
  const { stats, history } = await contendOnNewReplicas(t, 3, {
    keys: ['q-wait'],
    clients: 12,
    durationMs: 3000,
    ttlMs: 2000,
    waitMs: 5000,
  })
  t.same(stats.unexpected, [])
  t.ok(
    stats.unavailable <= stats.grants / 20,
    `${stats.unavailable} answers 503 (a node timeout on an overloaded machine is a correct 503; a stream of them is not)`,
  )
  t.equal(stats.grantsPerClient.size, 12, `every client was granted (${stats.grants} grants, ${stats.conflicts} gave up)`)
  history.assertSafe(t, 'waiting clients, quorum of 3, two replicas')
})
