import t from 'tap'
import { buildApp } from '../../src/app.js'
import { configFrom } from '../../src/config.js'
import { startApp, startListening } from '../../harness/app.js'
import { contend } from '../helpers/contenders.js'
import { contendThroughKill } from '../helpers/failover.js'
import { History } from '../../harness/history.js'
import { startSentinelSet } from '../../harness/redis-sentinel.js'
import { startReplicas } from '../../harness/service-process.js'
import { lineAcrossReplicas } from '../helpers/line.js'
import { exclusiveSuite } from '../suites/exclusive.js'
import { rwlockSuite } from '../suites/rwlock.js'

const tok = (name: string) => `${name}-sentinel-token-00000`
const KEYS = ['alpha', 'bravo', 'charlie']

t.test('a primary, a replica and three sentinels', async (t) => {
  const set = await startSentinelSet({ t })
  const sentinel = { redisMode: 'sentinel' as const, sentinel: set.config, logLevel: 'warn' }

  t.test('exclusive', (t) => exclusiveSuite(t, [], sentinel))
  t.test('read-write', (t) => rwlockSuite(t, [set.primary], { overrides: sentinel, client: () => set.primary.client() }))

  t.test('contention, waiting in line: history-checked', async (t) => {
    const { address } = await startListening(t, [], sentinel)
    const history = new History()
    const stats = await contend({ baseUrls: [address], history, keys: KEYS, clients: 12, durationMs: 2500, ttlMs: 2000, waitMs: 1000 })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 100, `${stats.grants} grants`)
    history.assertSafe(t)
  })

  t.test('two service replicas: FIFO hand-off across them, history-checked', async (t) => {
    const [a, b] = await startReplicas([], { t, env: set.env })
    const path = '/locks/line'
    await lineAcrossReplicas(t, a.url, b.url, path, tok)
    const history = new History()
    const stats = await contend({ baseUrls: [a.url, b.url], history, keys: KEYS, clients: 10, durationMs: 2500, ttlMs: 2000, waitMs: 1000 })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 50, `${stats.grants} grants through two replicas`)
    history.assertSafe(t)
  })

  t.test('readiness shows one voter; a wrong primary name is a readable start error', async (t) => {
    const { app } = await startApp(t, [], sentinel)
    const ready = await app.inject({ method: 'GET', url: '/readyz' })
    t.equal(ready.statusCode, 200)
    t.equal(ready.json().nodes.length, 1)
    t.equal(ready.json().nodes[0].vote, 'counts')
    const wrong = configFrom({
      redisMode: 'sentinel',
      sentinel: { ...set.config, name: 'nobody' },
      redisUrls: [],
      logLevel: 'silent',
      nodeTimeoutMs: 300,
    })
    await t.rejects(buildApp(wrong), /REDIS_MODE=sentinel: no primary named "nobody" could be reached through the sentinels/)
  })
})

for (const waitReplicas of [1, 0]) {
  t.test(
    `the primary killed under contention, REDIS_WAIT_REPLICAS=${waitReplicas}: 503 while it lasts, recovery, fences increase`,
    async (t) => {
      // With WAIT 1 the primary needs a second replica, or the promoted one could confirm nothing.
      const set = await startSentinelSet({ t, replicas: 1 + waitReplicas })
      const { address } = await startListening(t, [], {
        redisMode: 'sentinel',
        sentinel: set.config,
        logLevel: 'silent',
        nodeTimeoutMs: 500,
        waitReplicas,
      })
      const { stats, history, recoveryMs } = await contendThroughKill({
        address,
        keys: KEYS,
        probeKey: 'alpha',
        kill: () => set.primary.kill(),
      })
      t.same(stats.unexpected, [], 'only 201, 409 and 503 (and 200: a hold an earlier 503 made)')
      t.ok(stats.unavailable > 0, `${stats.unavailable} answers were 503 while there was no primary`)
      t.ok(!Number.isNaN(recoveryMs), `grants again ${recoveryMs.toFixed(0)} ms after the kill (down-after-milliseconds 1000)`)
      t.ok(stats.grants >= 50, `${stats.grants} grants`)
      const violations = history.check()
      if (waitReplicas > 0) history.assertSafe(t)
      else
        t.same(
          violations.filter((v) => v.kind !== 'overlap'),
          [],
          'fences strictly increase across the failover (the TIME floor)',
        )
      t.comment(
        `sentinel, WAIT ${waitReplicas}: recovery ${recoveryMs.toFixed(0)} ms after the kill; ${stats.unavailable} × 503; ${violations.length} violations in ${history.size} holds`,
      )
    },
  )
}
