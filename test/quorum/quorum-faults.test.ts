import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { configFrom } from '../../src/config.js'
import { lockKeys } from '../../src/locks/keys.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'
import { contend } from '../helpers/contenders.js'
import { History } from '../../harness/history.js'
import { until } from '../helpers/until.js'

const NODE_TIMEOUT_MS = 250
// A no-hang bound (node timeout plus slack for a loaded 2-core machine), not a speed measurement.
const BOUND_MS = NODE_TIMEOUT_MS * 2 + 1500
const PREFIX = 'lock-service:'

t.test('one of three nodes killed: grants continue, the history stays safe', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS, logLevel: 'warn' },
  )
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const history = new History()
  const run = contend({ baseUrls: [address], keys: ['q-hot'], clients: 16, durationMs: 3000, ttlMs: 2000, history })
  await sleep(1000)
  await nodes[1]!.kill()
  const stats = await run
  t.same(stats.unexpected, [])
  t.ok(stats.grants > 50, `${stats.grants} grants, ${stats.conflicts} conflicts, ${stats.unavailable} unavailable`)
  const after = await app.inject({ method: 'POST', url: '/locks/after-kill' })
  t.equal(after.statusCode, 201, 'a majority of two still grants')
  history.assertSafe(t, 'quorum of 3 with one node killed mid-run')
})

t.test('two of three nodes down: every acquire is 503 within the bound, never a grant', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS },
  )
  await nodes[0]!.kill()
  await nodes[2]!.kill()
  let slowest = 0
  for (let i = 0; i < 20; i++) {
    const started = performance.now()
    const res = await app.inject({ method: 'POST', url: `/locks/minority-${i % 3}` })
    slowest = Math.max(slowest, performance.now() - started)
    t.equal(res.statusCode, 503, `acquire ${i}: 503`)
    const body = res.json()
    t.equal(body.error, 'backend_unavailable')
    t.same(
      body.nodes.map((n: { up: boolean }) => n.up),
      [false, true, false],
      'the body says which nodes answered',
    )
  }
  t.ok(slowest < BOUND_MS, `slowest 503 took ${slowest.toFixed(0)} ms (< ${BOUND_MS})`)
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503, 'not ready without a majority')
  const survivor = nodes[1]!.client()
  t.teardown(() => survivor.quit())
  t.same(await survivor.keys(`${PREFIX}lock:*[^e]`), [], 'the minority node holds no lock: every partial grant was rolled back')
})

t.test('paused nodes (SIGSTOP): one paused still grants, two paused answer 503; nothing hangs', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS },
  )
  nodes[0]!.pause()
  let started = performance.now()
  const one = await app.inject({ method: 'POST', url: '/locks/paused-1' })
  t.equal(one.statusCode, 201, 'one paused: a majority grants')
  t.ok(performance.now() - started < BOUND_MS, 'answered without waiting for the paused node past its timeout')
  nodes[1]!.pause()
  started = performance.now()
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => app.inject({ method: 'POST', url: `/locks/paused-2-${i}` })))
  const took = performance.now() - started
  t.same(
    results.map((r) => r.statusCode),
    Array(6).fill(503),
    'two paused: 503',
  )
  t.ok(took < BOUND_MS, `6 concurrent acquires answered in ${took.toFixed(0)} ms (< ${BOUND_MS})`)
  nodes[0]!.resume()
  nodes[1]!.resume()
  await until(async () => (await app.inject({ method: 'POST', url: '/locks/resumed' })).statusCode === 201, 'grants after resume')
  for (let i = 0; i < 6; i++) {
    await until(
      async () => (await app.inject({ method: 'GET', url: `/locks/paused-2-${i}` })).statusCode === 404,
      `paused-2-${i} rolled back`,
    )
  }
  t.pass('the acquires the paused nodes ran late were rolled back')
})

t.test('a node restarted empty is quarantined: a lock held before the restart is not granted again through it', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const [a, b, c] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]]
  const QUARANTINE = 2500
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    // No lock-delays (MAX_LOCK_DELAY_MS=0): the quarantine is MAX_TTL_MS alone.
    { nodeTimeoutMs: NODE_TIMEOUT_MS, maxTtlMs: QUARANTINE, maxLockDelayMs: 0, defaultTtlMs: QUARANTINE },
  )
  const held = await app.inject({ method: 'POST', url: '/locks/q-restart?ttl=2500' })
  t.equal(held.statusCode, 201)
  // X's copy on C is lost (as if C had missed the grant): X still holds A and B, a majority.
  const cClient = c.client()
  t.teardown(() => cClient.quit())
  await cClient.del(lockKeys(PREFIX, 'lock', 'q-restart').holds)
  // A restarts empty. Without the quarantine, A (empty) + C (empty) would be a majority for Y.
  await a.kill()
  await a.restart()
  await until(async () => {
    const node = (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0]
    return node.up === true && node.vote !== 'identifying'
  }, 'A reconnected and identified')
  const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
  t.ok(ready.nodes[0].quarantineMs > 0, `/readyz shows A quarantined for ${ready.nodes[0].quarantineMs} ms`)
  const y = await app.inject({ method: 'POST', url: '/locks/q-restart' })
  t.equal(y.statusCode, 409, 'Y is refused: the restarted node does not count toward the grant')
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /redis_node_restarts_total\{node="0"\} 1/)

  // After the quarantine (= MAX_TTL_MS, the longest any earlier hold could last, with no lock-delay after it) A counts again.
  await b.kill()
  await sleep(QUARANTINE + 100)
  const later = await app.inject({ method: 'POST', url: '/locks/q-after' })
  t.equal(later.statusCode, 201, 'A and C grant together once the quarantine is over')
})

t.test('fences increase across grants whose voting majorities differ', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  // A short MAX_TTL_MS and no lock-delays: node C's quarantine after its restart below is short too.
  const MAX_TTL = 1500
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS, maxTtlMs: MAX_TTL, maxLockDelayMs: 0, defaultTtlMs: MAX_TTL },
  )
  const key = 'q-fence'
  const fenceKey = lockKeys(PREFIX, 'lock', key).fence
  // Node A's counter runs far ahead (e.g. its clock was ahead when it issued fences).
  const aClient = nodes[0]!.client()
  const ahead = 9_000_000_000_000_000
  await aClient.set(fenceKey, String(ahead))
  await aClient.quit()
  await nodes[2]!.kill() // grant 1 is voted by {A, B}
  const g1 = (await app.inject({ method: 'POST', url: `/locks/${key}?ttl=200` })).json()
  t.equal(g1.fence, ahead + 1, 'grant 1 takes the largest proposal of its majority')
  await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': g1.token } })
  await nodes[2]!.restart()
  await until(async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[2].up === true, 'C back')
  await nodes[0]!.kill() // grant 2 is voted by {B, C}: B must have stored grant 1's fence
  // C restarted, so it is quarantined for MAX_TTL_MS: wait it out (a fresh replica knows of it too).
  const fresh = await buildApp(
    configFrom({
      redisUrls: nodes.map((n) => n.url),
      nodeTimeoutMs: NODE_TIMEOUT_MS,
      maxTtlMs: MAX_TTL,
      maxLockDelayMs: 0,
      defaultTtlMs: MAX_TTL,
      logLevel: 'silent',
    }),
  )
  t.teardown(() => fresh.close())
  // B (identified by the fresh replica on its own) and C (out of quarantine) must both count.
  await until(
    async () => {
      const { nodes: seen } = (await fresh.inject({ method: 'GET', url: '/readyz' })).json() as { nodes: { vote: string }[] }
      return seen[1]?.vote === 'counts' && seen[2]?.vote === 'counts'
    },
    'B identified and C out of quarantine',
    5000,
  )
  const g2 = (await fresh.inject({ method: 'POST', url: `/locks/${key}` })).json()
  t.ok(g2.fence > g1.fence, `grant 2 (${g2.fence}) > grant 1 (${g1.fence}) although no node voted for both`)
  t.ok(Number.isSafeInteger(g2.fence))
})

t.test('a hand-off whose nodes propose different fences: the waiter gets the largest, stored on a majority first', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS },
  )
  const key = 'q-handoff-fence'
  const keys = lockKeys(PREFIX, 'lock', key)
  const a = (await app.inject({ method: 'POST', url: `/locks/${key}?ttl=30s` })).json()
  const waiting = app.inject({ method: 'POST', url: `/locks/${key}?wait=10s`, headers: { 'lock-token': 'waiter-token-handoff-0001' } })
  await until(async () => (await app.inject({ method: 'GET', url: `/locks/${key}` })).json().waiters === 1, 'in line')
  // Nodes A and B have counters ahead of C (and of the hint) by different amounts, so their two
  // hand-offs disagree: the waiter must store the larger on a majority before answering. C is paused
  // through the release, so that A and B's are the hand-offs the waiter has: the larger is A's.
  const aheadA = a.fence + 5_000_000_000
  const aheadB = a.fence + 3_000_000_000
  for (const [i, value] of [
    [0, aheadA],
    [1, aheadB],
  ] as const) {
    const client = nodes[i]!.client()
    await client.set(keys.fence, String(value))
    await client.quit()
  }
  nodes[2]!.pause()
  t.equal((await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': a.token } })).statusCode, 200)
  const res = await waiting
  nodes[2]!.resume()
  t.equal(res.statusCode, 201)
  const b = res.json()
  t.equal(b.fence, aheadA + 1, `the larger fence of the two hand-offs (A's ${aheadA + 1}, not B's ${aheadB + 1})`)
  const held = ['waiter-token-handoff-0001', String(b.fence)]
  const stored = () =>
    Promise.all(
      nodes.map(async (n) => {
        const c = n.client()
        try {
          return await c.hmget(keys.holds, 'w', 'wf')
        } finally {
          c.disconnect()
        }
      }),
    )
  const atAnswer = await stored()
  t.ok(
    atAnswer.filter((h) => h[0] === held[0] && h[1] === held[1]).length >= 2,
    'a majority held it for the waiter with that fence when it was answered (fence_commit)',
  )
  // The third node holds it for the waiter too; its fence is that one, or its own larger proposal when
  // its counter had passed it (a fence is committed only where no other hold can carry it).
  await until(async () => (await stored()).every((h) => h[0] === held[0] && Number(h[1]) >= b.fence), 'the third node too', 1000)
  t.pass('and the third node too, a moment later')
  // The next grant, voted by any majority, is above it.
  await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': b.token } })
  await nodes[0]!.kill()
  const c = (await app.inject({ method: 'POST', url: `/locks/${key}` })).json()
  t.ok(c.fence > b.fence, `a grant voted by B and C only (${c.fence}) is above it (${b.fence})`)
})

t.test('a node that is a replica is refused at start', async (t) => {
  const [a, c] = await startRedisCluster(2, { t })
  const replica = await startRedis({ t })
  const client = replica.client()
  await client.replicaof('127.0.0.1', a!.port)
  await client.quit()
  await t.rejects(
    buildApp(configFrom({ redisUrls: [a!.url, replica.url, c!.url], logLevel: 'silent' })),
    /node 1 \(127\.0\.0\.1:\d+\) is a replica/,
    'a clear error names the replica',
  )
})

t.test('a split vote (no majority either way) is answered 409 and rolled back everywhere', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: NODE_TIMEOUT_MS },
  )
  const keys = lockKeys(PREFIX, 'lock', 'split')
  // Another owner's copy only on node A (e.g. its own attempt in flight there); node B is down.
  const onlyA = await startApp(t, [nodes[0]!.url])
  t.equal((await onlyA.app.inject({ method: 'POST', url: '/locks/split?ttl=10s' })).statusCode, 201)
  await nodes[1]!.kill()
  const res = await app.inject({ method: 'POST', url: '/locks/split' })
  t.equal(res.statusCode, 409, 'granted on C, held on A, B down: no majority either way → 409')
  t.equal(res.json().error, 'lock_held')
  const c = nodes[2]!.client()
  t.teardown(() => c.quit())
  await until(async () => (await c.exists(keys.holds)) === 0, 'the partial grant on C rolled back')
  t.pass('the partial grant on C was rolled back')
})
