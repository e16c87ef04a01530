/**
 * Semaphores under contention and in line: the history checker on one Redis, on a quorum of 3 and
 * across two replicas; first come, first served with weighted waiters; a crashed holder's permits
 * coming back; hang-up, a dead replica, too many waiters and SIGTERM as for locks.
 */
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import t, { type Test } from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'
import { startReplicas } from '../../harness/service-process.js'
import { request } from '../../harness/http.js'
import { contendOnNewApp, contendOnNewReplicas, type ContendStats } from '../helpers/contenders.js'
import { History } from '../../harness/history.js'
import { until } from '../helpers/until.js'
import { WAITER_LEASE_MS } from '../../src/locks/waiting.js'

const tok = (name: string) => `${name}-semwait-token-0000`
const LIMIT = 4
/** Clients 0, 4, 8, … ask for 2 permits, the others for 1. */
const weighted = (client: number) => (client % 4 === 0 ? 2 : 1)

/** The checks every semaphore contention run makes, and its figures in the assertion's message. */
function assertSemaphoreHistory(t: Test, history: History, stats: ContendStats, label: string): void {
  t.same(stats.unexpected, [], 'only 201, 409, 503 and release 200 were seen')
  t.ok(
    stats.unavailable <= stats.grants / 20,
    `${stats.unavailable} answers 503 (a node timeout on an overloaded machine is a correct 503; a stream of them is not)`,
  )
  t.ok(stats.grants >= 100, `${stats.grants} grants (${stats.reanchored} re-anchored after a long wait), ${stats.conflicts} refused`)
  const peaks = [...history.permitPeaks().values()]
  t.ok(peaks.length > 0 && peaks.every((p) => p.maxInUse <= LIMIT), `at most ${LIMIT} permits at once: ${JSON.stringify(peaks)}`)
  t.ok(
    peaks.some((p) => p.maxInUse >= LIMIT - 1),
    'the holds really shared the semaphore (several permits in use at once)',
  )
  history.assertSafe(t, label)
}

for (const n of [1, 3]) {
  t.test(
    `16 clients on two semaphores of limit ${LIMIT} without waiting, weighted (N = ${n}): never over the limit, fences increase`,
    async (t) => {
      const { stats, history } = await contendOnNewApp(t, n, {
        keys: ['sem-hot-1', 'sem-hot-2'],
        clients: 16,
        durationMs: 3000,
        ttlMs: 2000,
        semaphore: { limit: LIMIT, permits: weighted },
        holdMs: () => 1 + Math.random() * 4,
      })
      t.ok(stats.conflicts > 0, 'the clients really contended')
      assertSemaphoreHistory(t, history, stats, `semaphores of limit ${LIMIT}, 16 clients, N = ${n}`)
    },
  )
}

t.test('16 waiting clients on one semaphore of limit 4 (one Redis): everyone served, safe history', async (t) => {
  const { app, stats, history } = await contendOnNewApp(t, 1, {
    keys: ['sem-wait'],
    clients: 16,
    durationMs: 3000,
    ttlMs: 2000,
    waitMs: 5000,
    semaphore: { limit: LIMIT, permits: weighted },
    holdMs: () => 1 + Math.random() * 2,
  })
  t.equal(stats.conflicts, 0, 'nobody gave up: every waiter was served within its wait')
  t.equal(stats.grantsPerClient.size, 16, 'every client was granted, the 2-permit ones too')
  assertSemaphoreHistory(t, history, stats, `16 waiting clients on a semaphore of limit ${LIMIT}`)
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /lock_acquire_duration_seconds_count\{mode="permit",outcome="granted"\} [1-9]/, 'acquires counted with mode="permit"')
  t.match(metrics, /lock_wait_duration_seconds_count\{mode="permit",outcome="granted"\} [1-9]/)
  t.match(metrics, /lock_releases_total\{mode="permit",outcome="released"\} [1-9]/)
})

t.test('waiting clients on a quorum of 3 through two replicas: safe, everyone served; SIGTERM drains', async (t) => {
  const {
    replicas: [a, b],
    stats,
    history,
  } = await contendOnNewReplicas(t, 3, {
    keys: ['q-sem'],
    clients: 12,
    durationMs: 3000,
    ttlMs: 2000,
    waitMs: 5000,
    semaphore: { limit: LIMIT, permits: weighted },
    holdMs: () => 1 + Math.random() * 3,
  })
  t.equal(stats.grantsPerClient.size, 12, `every client was granted (${stats.grants} grants, ${stats.conflicts} gave up)`)
  assertSemaphoreHistory(t, history, stats, `waiting clients on a semaphore of limit ${LIMIT}, quorum of 3, two replicas`)

  // SIGTERM with semaphore waiters parked on the leaving replica.
  const key = '/semaphores/q-drain'
  t.equal((await request(b.url, 'POST', `${key}?limit=2&permits=2&ttl=30s`, { token: tok('holder') })).status, 201)
  const parked = [1, 2].map((p) => request(a.url, 'POST', `${key}?limit=2&permits=${p}&wait=30s`, { token: tok(`p${p}`) }))
  await until(async () => (await request(b.url, 'GET', key)).body.waiters === 2, 'two waiters in line')
  const exit = a.stop('SIGTERM')
  const answers = await Promise.all(parked)
  t.same(
    answers.map((r) => [r.status, r.body.error]),
    Array(2).fill([503, 'shutting_down']),
    'each parked waiter got 503 shutting_down',
  )
  t.equal(await exit, 0, 'the replica drained and exited 0')
  await until(async () => (await request(b.url, 'GET', key)).body.waiters === 0, 'their places in line released')
  t.equal(await b.stop(), 0)
})

t.test('a hand-off split across the nodes does not stop the line for a node timeout (two replicas, quorum of 3)', async (t) => {
  // The nodes of a quorum may hand freed permits to different waiters (their lines differ after a
  // failed attempt), each with a minority and nobody left holding: only an attempt moves the line
  // then. A long node timeout shows whether a waiter sits one out first.
  const nodeTimeoutMs = 3000
  const { replicas, stats, history } = await contendOnNewReplicas(
    t,
    3,
    {
      keys: ['q-split'],
      clients: 12,
      durationMs: 4000,
      ttlMs: 10_000,
      waitMs: 9000,
      semaphore: { limit: LIMIT, permits: weighted },
      holdMs: () => 1 + Math.random() * 3,
    },
    { NODE_TIMEOUT_MS: String(nodeTimeoutMs) },
  )
  const pause = history.longestPauseBetweenGrants()
  t.ok(
    pause < nodeTimeoutMs / 2,
    `the line never stood still for long: longest pause between grants ${Math.round(pause)} ms (${stats.grants} grants)`,
  )
  t.equal(stats.grantsPerClient.size, 12, 'every client was granted')
  t.same(stats.unexpected, [], 'only 201, 409 and release 200 were seen, and no hold was lost within its validity')
  history.assertSafe(t, 'split hand-offs, quorum of 3, two replicas')
  await Promise.all(replicas.map((r) => r.stop()))
})

t.test('waiting on one semaphore (one Redis)', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { maxWaiters: 20 })
  const post = (url: string, token: string) => app.inject({ method: 'POST', url, headers: { 'lock-token': token } })
  const del = (url: string, token: string) => app.inject({ method: 'DELETE', url, headers: { 'lock-token': token } })
  const stateOf = async (key: string) => {
    const res = await app.inject({ method: 'GET', url: `/semaphores/${key}` })
    return res.statusCode === 200
      ? (res.json() as { permitsInUse: number; holders: number; waiters: number })
      : { permitsInUse: 0, holders: 0, waiters: 0 }
  }

  t.test('first come, first served with weights: a big head blocks smaller waiters behind it', async (t) => {
    const key = 'fifo-weighted'
    await post(`/semaphores/${key}?limit=4&permits=4&ttl=30s`, tok('holder'))
    const granted: string[] = []
    const waiters = new Map<string, Promise<number>>()
    // In arrival order: w0 needs 3, w1 1, w2 2, w3 1.
    for (const [name, permits] of [
      ['w0', 3],
      ['w1', 1],
      ['w2', 2],
      ['w3', 1],
    ] as const) {
      const before = (await stateOf(key)).waiters
      waiters.set(
        name,
        post(`/semaphores/${key}?limit=4&permits=${permits}&wait=20s&ttl=30s`, tok(name)).then((res) => {
          granted.push(name)
          return res.statusCode
        }),
      )
      await until(async () => (await stateOf(key)).waiters === before + 1, `${name} in line`)
    }
    await del(`/semaphores/${key}`, tok('holder'))
    await until(async () => granted.length === 2, 'the first grants')
    t.same(granted.sort(), ['w0', 'w1'], 'the release hands 4 permits to the run at the head that fits: w0 (3) and w1 (1)')
    t.same(await stateOf(key), { key, limit: 4, permitsInUse: 4, holders: 2, waiters: 2 })

    await del(`/semaphores/${key}`, tok('w1'))
    await new Promise((r) => setTimeout(r, 300))
    t.same(granted, ['w0', 'w1'], 'one permit free: w2 needs 2, so it waits — and w3 (1) behind it does not jump ahead')
    t.same(await stateOf(key), { key, limit: 4, permitsInUse: 3, holders: 1, waiters: 2 })

    await del(`/semaphores/${key}`, tok('w0'))
    t.same(await Promise.all(waiters.values()), [201, 201, 201, 201])
    t.same(granted.slice(2).sort(), ['w2', 'w3'], 'then w2 (2) and w3 (1) together')
    t.same(await stateOf(key), { key, limit: 4, permitsInUse: 3, holders: 2, waiters: 0 })
  })

  t.test('a holder that crashed after a hand-off: its permits come back to the line once its hold lapses', async (t) => {
    const key = 'crash-handoff'
    await post(`/semaphores/${key}?limit=2&permits=2&ttl=30s`, tok('a'))
    const b = post(`/semaphores/${key}?limit=2&permits=2&ttl=300&wait=10s`, tok('b'))
    await until(async () => (await stateOf(key)).waiters === 1, 'b in line')
    const c = post(`/semaphores/${key}?limit=2&permits=1&wait=8s`, tok('c'))
    await until(async () => (await stateOf(key)).waiters === 2, 'c in line')
    await del(`/semaphores/${key}`, tok('a'))
    t.equal((await b).statusCode, 201, 'b is handed both permits, and never releases them (300 ms TTL)')
    const started = performance.now()
    const res = await c
    const took = performance.now() - started
    t.equal(res.statusCode, 201)
    t.ok(took < 2500, `c granted ${took.toFixed(0)} ms after b, not at the end of its 8 s wait`)
  })

  t.test('too many waiters on one semaphore: 429', async (t) => {
    const key = 'crowd'
    await post(`/semaphores/${key}?limit=1&ttl=30s`, tok('holder'))
    const parked = Array.from({ length: 20 }, (_, i) => post(`/semaphores/${key}?limit=1&wait=3s`, tok(`c${i}`)))
    await until(async () => (await stateOf(key)).waiters === 20, '20 in line')
    const over = await post(`/semaphores/${key}?limit=1&wait=3s`, tok('over'))
    t.same([over.statusCode, over.json().error], [429, 'too_many_waiters'])
    await del(`/semaphores/${key}`, tok('holder'))
    const results = await Promise.all(parked)
    t.ok(results.filter((r) => r.statusCode === 201).length >= 1, 'the line moves on')
  })

  t.test('a waiter whose HTTP client hangs up leaves the line at once', async (t) => {
    const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
    await post('/semaphores/hangup?limit=1&ttl=30s', tok('holder'))
    const req = http.request({
      host: address.hostname,
      port: address.port,
      method: 'POST',
      path: '/semaphores/hangup?limit=1&wait=20s',
      headers: { 'lock-token': tok('gone') },
    })
    req.on('error', () => undefined)
    req.end()
    await until(async () => (await stateOf('hangup')).waiters === 1, 'in line')
    req.destroy()
    await until(async () => (await stateOf('hangup')).waiters === 0, 'left the line', 1000)
    t.pass('the hung-up waiter left the line within a second')
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    t.match(metrics, /lock_wait_duration_seconds_count\{mode="permit",outcome="cancelled"\} 1/)
  })
})

t.test('a replica that dies: a release hands the permits past its waiter', async (t) => {
  const redis = await startRedis({ t })
  const [doomed, survivor] = await startReplicas([redis.url], { t })
  const key = '/semaphores/crash'
  await request(survivor.url, 'POST', `${key}?limit=3&permits=3&ttl=30s`, { token: tok('holder') })
  request(doomed.url, 'POST', `${key}?limit=3&permits=3&wait=30s`, { token: tok('doomed') }).catch(() => undefined)
  await until(async () => (await request(survivor.url, 'GET', key)).body.waiters === 1, 'first waiter in line')
  const second = request(survivor.url, 'POST', `${key}?limit=3&permits=2&wait=30s`, { token: tok('second') })
  await until(async () => (await request(survivor.url, 'GET', key)).body.waiters === 2, 'second waiter in line')
  await doomed.stop('SIGKILL')
  const released = performance.now()
  await request(survivor.url, 'DELETE', key, { token: tok('holder') })
  const res = await second
  const took = performance.now() - released
  t.same([res.status, res.body.permits], [201, 2], 'the second waiter is granted although the first one’s replica is gone')
  // Not the slow way round, the dead waiter's lease lapsing (WAITER_LEASE_MS, renewed every second):
  // the release's push reaches no subscriber, so the permits go past the dead waiter at once.
  t.ok(took < WAITER_LEASE_MS / 2, `within ${took.toFixed(0)} ms of the release, well before the dead waiter's lease could lapse`)
  t.same((await request(survivor.url, 'GET', key)).body.waiters, 0, 'the dead waiter left the line')
})
