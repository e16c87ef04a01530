import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const NODE_TIMEOUT_MS = 300
// "Quickly": within the node timeout plus scheduling slack on a loaded 2-core machine. This is a
// no-hang bound, not a speed measurement.
const BOUND_MS = NODE_TIMEOUT_MS * 2 + 1500

t.test('Redis killed: 503 backend_unavailable within the node-timeout budget; back: grants again', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { nodeTimeoutMs: NODE_TIMEOUT_MS })
  const held = await app.inject({ method: 'POST', url: '/locks/before?ttl=60s' })
  t.equal(held.statusCode, 201)

  await redis.kill()
  for (const [method, url] of [
    ['POST', '/locks/k1'],
    ['PUT', '/locks/k1/renew'],
    ['DELETE', '/locks/k1'],
    ['GET', '/locks/k1'],
  ] as const) {
    const started = performance.now()
    const res = await app.inject({ method, url, headers: { 'lock-token': 'aaaaaaaaaaaaaaaaaaaa' } })
    const took = performance.now() - started
    t.equal(res.statusCode, 503, `${method} ${url}: 503`)
    const body = res.json()
    t.equal(body.error, 'backend_unavailable')
    t.match(body.message, /Redis/)
    t.same(
      body.nodes.map((n: { address: string; up: boolean }) => [n.address, n.up]),
      [[redis.address, false]],
      'per-node summary, host:port only',
    )
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After set')
    t.ok(took < BOUND_MS, `${method} answered in ${took.toFixed(0)} ms (< ${BOUND_MS})`)
  }
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 503, '/readyz is 503 while Redis is down')
  t.equal(ready.json().nodes[0].up, false)

  await redis.restart()
  let status = 0
  for (let i = 0; i < 100 && status !== 201; i++) {
    status = (await app.inject({ method: 'POST', url: '/locks/after' })).statusCode
    if (status !== 201) await sleep(100)
  }
  t.equal(status, 201, 'grants again once Redis is back, without a restart of the service')
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
})

t.test('a lone Redis that restarted empty is said so: a warning, /readyz restartedAt, a counter', async (t) => {
  const redis = await startRedis({ t })
  const { app, logs } = await startApp(t, [redis.url], { nodeTimeoutMs: NODE_TIMEOUT_MS })
  t.equal((await app.inject({ method: 'POST', url: '/locks/before?ttl=60s' })).statusCode, 201)
  const node = async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0] as { restartedAt: string | null }
  t.equal((await node()).restartedAt, null, 'no restart seen yet')
  const restarts = async () =>
    Number(/^redis_node_restarts_total\{node="0"\} (\d+)/m.exec((await app.inject({ url: '/metrics' })).body)?.[1])
  t.equal(await restarts(), 0)

  await redis.kill()
  const restarted = Date.now()
  await redis.restart()
  let seen: string | null = null
  for (let i = 0; i < 100 && seen === null; i++) {
    seen = (await node()).restartedAt
    if (seen === null) await sleep(100)
  }
  t.ok(seen !== null, '/readyz names the restart')
  t.ok(Math.abs(Date.parse(String(seen)) - restarted) < 3000, `restartedAt is when it started (${seen})`)
  t.equal(await restarts(), 1, 'redis_node_restarts_total counts it once')
  const warning = logs().filter((l) => typeof l.msg === 'string' && /restarted \(its run_id changed\): holds on it may be gone/.test(l.msg))
  t.equal(warning.length, 1, 'one warning says holds may be gone')
  t.equal(warning[0]?.level, 40, 'at warn')
  t.equal((await app.inject({ method: 'GET', url: '/locks/before' })).statusCode, 404, 'the hold it had is indeed gone')
  const after = await app.inject({ method: 'POST', url: '/locks/before?ttl=60s' })
  t.equal(after.statusCode, 201, 'grants again')
})

t.test('Redis paused (SIGSTOP): requests time out to 503, none hangs; no false grant after it resumes', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { nodeTimeoutMs: NODE_TIMEOUT_MS })
  redis.pause()
  const started = performance.now()
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => app.inject({ method: 'POST', url: `/locks/p${i % 2}?ttl=60s` })))
  const took = performance.now() - started
  redis.resume()
  t.same(
    results.map((r) => r.statusCode),
    Array(8).fill(503),
    'every acquire is refused with 503',
  )
  t.ok(took < BOUND_MS, `8 concurrent acquires answered in ${took.toFixed(0)} ms (< ${BOUND_MS})`)
  // The paused node ran those acquires late; each was rolled back, so nothing is held now.
  await sleep(200)
  for (const key of ['p0', 'p1']) {
    let state = 0
    for (let i = 0; i < 20; i++) {
      state = (await app.inject({ method: 'GET', url: `/locks/${key}` })).statusCode
      if (state === 404) break
      await sleep(100)
    }
    t.equal(state, 404, `${key}: the late-executed acquires were rolled back, no orphan hold`)
  }
  const now = await app.inject({ method: 'POST', url: '/locks/p0' })
  t.equal(now.statusCode, 201, 'the key is free for a new owner')
})
