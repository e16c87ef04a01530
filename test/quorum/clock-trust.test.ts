/**
 * A node whose clock runs fast or steps stops counting toward a majority (single mode: grants are
 * refused with 503) until it has behaved for MAX_TTL_MS + MAX_LOCK_DELAY_MS. Real redis-servers whose wall clock an
 * LD_PRELOAD shim controls; the service's own clock is the real monotonic one.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { ClockWatch } from '../../src/redis/clock.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { clockShim } from '../../harness/clock-shim.js'
import { startApp } from '../../harness/app.js'
import { until } from '../helpers/until.js'

const DRIFT = 0.01

t.test('ClockWatch: a clock within the allowance stays trusted; a fast one, a step or a step back is distrusted', async (t) => {
  const sample = (at: number, nodeMs: number, rtt = 0.5) => ({ sentAt: at, receivedAt: at + rtt, nodeMs })
  const feed = (rate: number, seconds: number, stepAt?: { second: number; ms: number }) => {
    const watch = new ClockWatch(DRIFT, 5000)
    const changes: string[] = []
    let offset = 0
    for (let s = 0; s <= seconds; s++) {
      if (stepAt && s === stepAt.second) offset += stepAt.ms
      const change = watch.add(sample(s * 1000, 1e12 + s * 1000 * rate + offset))
      if (change) changes.push(`${change}@${s}`)
    }
    return { watch, changes }
  }
  const within = feed(1.005, 60)
  t.same(within.changes, [], 'rate 1.005 (DRIFT_FACTOR 0.01): never distrusted over 60 s')
  t.ok(Math.abs((within.watch.rate() ?? 0) - 1.005) < 0.001, `measured rate ${within.watch.rate()}`)
  t.same(feed(1.05, 10).changes.slice(0, 1), ['distrusted@1'], 'rate 1.05: distrusted at the second sample')
  t.same(feed(1.015, 30).changes.slice(0, 1), ['distrusted@1'], 'rate 1.015: distrusted within seconds')
  t.same(
    feed(1, 10, { second: 4, ms: 50 }).changes,
    ['distrusted@4', 'trusted@9'],
    'a 50 ms step: distrusted, then trusted after 5 s of good behaviour',
  )
  t.same(feed(1, 10, { second: 4, ms: -50 }).changes, ['distrusted@4', 'trusted@9'], 'a step back likewise')
  // A slow answer (a paused node, a busy event loop) widens the window instead of raising an alarm.
  const slow = new ClockWatch(DRIFT, 5000)
  slow.add({ sentAt: 0, receivedAt: 1, nodeMs: 1e12 })
  t.equal(slow.add({ sentAt: 1000, receivedAt: 3000, nodeMs: 1e12 + 2900 }), undefined, 'a TIME answer that took 2 s is no violation')
  t.equal(slow.status(3000).state, 'trusted')
})

t.test('single mode: a fast clock is detected within seconds, grants are refused with 503, then trusted again', async (t) => {
  const clock = await clockShim()
  const redis = await startRedis({ t, env: clock.env })
  const MAX_TTL = 2000
  const MAX_LOCK_DELAY = 1000
  // Every hold and lock-delay the fast clock may have cut short has lapsed after this.
  const PROBATION = MAX_TTL + MAX_LOCK_DELAY
  const { app, logs } = await startApp(t, [redis.url], { maxTtlMs: MAX_TTL, maxLockDelayMs: MAX_LOCK_DELAY, defaultTtlMs: 1000 })
  t.equal((await app.inject({ method: 'POST', url: '/locks/clock-before' })).statusCode, 201, 'trusted at first')

  // Within the allowance: stays trusted.
  await clock.setRate(1 + DRIFT / 2)
  await sleep(4000)
  const steady = (await app.inject({ method: 'GET', url: '/readyz' })).json()
  t.equal(steady.nodes[0].clock.state, 'trusted', `rate ${steady.nodes[0].clock.rate?.toFixed(4)}: within DRIFT_FACTOR, trusted`)
  t.equal((await app.inject({ method: 'POST', url: '/locks/clock-within' })).statusCode, 201)

  await clock.setRate(1.05)
  const changed = performance.now()
  await until(
    async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].clock.state === 'untrusted',
    'distrusted',
    5000,
    50,
  )
  const detectedMs = performance.now() - changed
  t.ok(detectedMs < 3000, `a clock running at 1.05 was distrusted after ${Math.round(detectedMs)} ms`)
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 503, 'not ready: the only node may not vote')
  t.equal(ready.json().nodes[0].vote, 'clock_untrusted')
  const refused = await app.inject({ method: 'POST', url: '/locks/clock-during' })
  t.equal(refused.statusCode, 503, 'grants refused')
  t.equal(refused.json().error, 'backend_unavailable')
  t.equal(refused.json().voting, 0)
  t.equal((await app.inject({ method: 'GET', url: '/locks/clock-before' })).statusCode, 503, 'inspect cannot be trusted either')
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const rate = Number(/redis_node_clock_rate\{node="0"\} ([\d.]+)/.exec(metrics)?.[1])
  t.ok(rate > 1.01, `redis_node_clock_rate shows ${rate}`)
  t.match(metrics, /redis_node_clock_distrusted_total\{node="0"\} 1/)
  t.match(metrics, /redis_node_votes\{node="0"\} 0/)
  t.ok(
    logs().some((l) => l.level === 40 && /clock distrusted/.test(String(l.msg))),
    'a warn line says the node was distrusted',
  )

  // Back to real speed: trusted again once it has behaved for MAX_TTL_MS + MAX_LOCK_DELAY_MS.
  await clock.setRate(1)
  const healed = performance.now()
  await until(
    async () => (await app.inject({ method: 'POST', url: '/locks/clock-after' })).statusCode === 201,
    'grants again',
    PROBATION + 4000,
    100,
  )
  const trustedAfter = performance.now() - healed
  t.ok(
    trustedAfter >= PROBATION - 1100,
    `granting again ${Math.round(trustedAfter)} ms after the clock behaved (probation ${PROBATION} ms)`,
  )
  await until(async () => logs().some((l) => /clock trusted again/.test(String(l.msg))), 'the log line', 2000)
  t.pass('and a line says so')
})

t.test('single mode: a clock step forward is distrusted at the next sample', async (t) => {
  const clock = await clockShim()
  const redis = await startRedis({ t, env: clock.env })
  const { app } = await startApp(t, [redis.url], { maxTtlMs: 3000 })
  await sleep(1200) // two samples
  await clock.step(2000)
  const stepped = performance.now()
  await until(
    async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].clock.state === 'untrusted',
    'distrusted',
    4000,
    50,
  )
  t.ok(performance.now() - stepped < 2500, `a +2 s step was distrusted after ${Math.round(performance.now() - stepped)} ms`)
  t.equal((await app.inject({ method: 'POST', url: '/locks/step' })).statusCode, 503)
})

t.test('quorum: a node with a fast clock stops counting; the others still grant', async (t) => {
  const clock = await clockShim()
  const nodes = await startRedisCluster(3, { t, env: (i) => (i === 0 ? clock.env : undefined) })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { maxTtlMs: 5000 },
  )
  await clock.setRate(1.1)
  await until(
    async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].vote === 'clock_untrusted',
    'node 0 distrusted',
    5000,
    50,
  )
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'still ready: two of three may vote')
  t.equal((await app.inject({ method: 'POST', url: '/locks/quorum-clock' })).statusCode, 201, 'granted by the two trusted nodes')
  await nodes[1]!.kill()
  const res = await app.inject({ method: 'POST', url: '/locks/quorum-clock-2' })
  t.equal(res.statusCode, 503, 'one trusted node left: no majority (the fast node does not count)')
  t.equal(res.json().voting, 1)
})
