import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { lockDelaySuite } from '../suites/lock-delay.js'

t.test('lock-delay on one Redis', async (t) => {
  const figures = await lockDelaySuite(t, [(await startRedis({ t })).url])
  t.test('figures', async (t) => {
    t.comment(`waiter served after the delay's end: ${figures.waiterLatencyMs.join(', ')} ms`)
    t.equal(figures.waiterLatencyMs.length, 3)
  })
})

t.test('metrics: lock_delayed_total and lock_delay_seconds count each held-back acquire once', async (t) => {
  const { app } = await startApp(t, [(await startRedis({ t })).url], { logLevel: 'warn' })
  const post = (url: string, token: string, body: object = {}) =>
    app.inject({ method: 'POST', url, headers: { 'lock-token': token }, payload: body })
  const sample = async (name: string) => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith(name))
    return Number(line?.split(' ')[1] ?? NaN)
  }
  t.equal(await sample('lock_delayed_total{mode="exclusive"}'), 0, 'at 0 from start')
  const first = await post('/locks/m', 'metrics-token-a-0123456789', { ttlMs: 150, lockDelayMs: 1000 })
  t.equal(first.statusCode, 201)
  await sleep(200)
  t.equal((await post('/locks/m', 'metrics-token-b-0123456789')).json().error, 'lock_delayed')
  t.equal(await sample('lock_delayed_total{mode="exclusive"}'), 1, 'a refusal: 1')
  t.equal(await sample('lock_acquire_duration_seconds_count{mode="exclusive",outcome="error"}'), 0, 'not counted as an error')
  const waited = await post('/locks/m', 'metrics-token-c-0123456789', { waitMs: 3000 })
  t.equal(waited.statusCode, 201)
  t.equal(await sample('lock_delayed_total{mode="exclusive"}'), 2, 'a waiter kept in line: once more, however often it looked')
  t.equal(await sample('lock_delay_seconds_count{mode="exclusive"}'), 2)
  const sum = await sample('lock_delay_seconds_sum{mode="exclusive"}')
  t.ok(sum > 1.6 && sum < 2.0, `the delay left when met: ${sum.toFixed(3)} s in all`)
})
