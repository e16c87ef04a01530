/**
 * FENCE_RETENTION_MS: a key's fence counter is kept that long after its last grant, then Redis TIME
 * (µs) is the floor. Fences strictly increase (a) across a retention expiry — also when the service's
 * hint had taken the last fence ahead of the node's clock, which half the retention bounds; (b) across
 * an empty Redis restart; (c) with the node's clock stepped back by less than the retention (the
 * counter carries them; the clock guard distrusts the node meanwhile), and the guard distrusts a node
 * stepped back by more.
 */
import { performance } from 'node:perf_hooks'
import t, { type Test } from 'tap'
import { acquireScript } from '../../src/locks/scripts/acquire.js'
import { writeHoldInput } from '../helpers/acquire-input.js'
import { lockKeys } from '../../src/locks/keys.js'
import { lostChannel } from '../../src/locks/watch.js'
import { WAITER_LEASE_MS, wakePrefix } from '../../src/locks/waiting.js'
import { keyCountOf, loadScripts } from '../../src/redis/scripts.js'
import { GONE_MEMORY_MS } from '../../src/locks/keys.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { startRedis } from '../../harness/redis-server.js'
import { clockShim } from '../../harness/clock-shim.js'
import { startApp, type TestApp } from '../../harness/app.js'
import { until } from '../helpers/until.js'

const PREFIX = 'lock-service:'

async function grantFence(app: TestApp['app'], key: string): Promise<number> {
  const res = await app.inject({ method: 'POST', url: `/locks/${key}?ttl=1s` })
  if (res.statusCode !== 201) throw new Error(`expected 201, got ${res.statusCode}: ${res.body}`)
  await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': res.json().token } })
  return res.json().fence as number
}

t.test('FENCE_RETENTION_MS: 1 h by default, 1 s … 30 days', async (t) => {
  t.equal(loadConfig({}).fenceRetentionMs, 3_600_000)
  t.equal(loadConfig({ FENCE_RETENTION_MS: '600000' }).fenceRetentionMs, 600_000)
  for (const bad of ['999', '2592000001', '1h', '-5']) {
    t.throws(() => loadConfig({ FENCE_RETENTION_MS: bad }), ConfigError, bad)
  }
})

t.test('(a) across a retention expiry: the counter goes, the next fence is still above the last', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { fenceRetentionMs: 1000, logLevel: 'warn' })
  const client = redis.client()
  t.teardown(() => client.quit())
  const counter = lockKeys(PREFIX, 'lock', 'kept').fence
  const first = await grantFence(app, 'kept')
  const pttl = await client.pttl(counter)
  t.ok(pttl > 0 && pttl <= 1000, `the counter is kept FENCE_RETENTION_MS after its grant (PTTL ${pttl})`)
  await until(async () => (await client.exists(counter)) === 0, 'the counter to lapse', 3000, 50)
  const after = await grantFence(app, 'kept')
  t.ok(after > first, `after the counter lapsed: ${after} > ${first}`)
})

t.test('(a) a hint far ahead of the node clock takes a fence at most half the retention ahead, so the floor passes it', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.quit())
  const scripts = loadScripts({
    FENCE_RETENTION_MS: 2000,
    MAX_READERS: 10,
    MAX_WAITERS: 10,
    WAITER_LEASE_MS,
    WAKE_PREFIX: wakePrefix(PREFIX),
    GONE_MEMORY_MS,
    LOST_CHANNEL: lostChannel(PREFIX),
  })
  client.defineCommand('acquire', { numberOfKeys: keyCountOf('acquire'), lua: scripts.get('acquire') as string })
  const keys = lockKeys(PREFIX, 'lock', 'ahead')
  const nodeUs = async () => {
    const [s, us] = (await client.time()) as [number | string, number | string]
    return Number(s) * 1e6 + Number(us)
  }
  const acquire = async (token: string, hint: number) => {
    const input = writeHoldInput(token, { ttlMs: 100, fenceHint: hint })
    const call = (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>).acquire as (
      ...a: (string | number)[]
    ) => Promise<unknown>
    const reply = acquireScript.decode(await call.call(client, ...keys.all.slice(0, keyCountOf('acquire')), ...acquireScript.args(input)))
    if (reply.code !== 1) throw new Error(`not granted: ${JSON.stringify(reply)}`)
    return reply.fence
  }
  // A service replica whose clock is an hour ahead of the node's.
  const before = await nodeUs()
  const ahead = await acquire('token-ahead-0000000001', before + 3600e6)
  t.ok(ahead <= (await nodeUs()) + 1000e3, `the fence is at most 1 s (half of 2 s) ahead of the node clock: ${ahead - before} µs`)
  await until(async () => (await client.exists(keys.fence)) === 0, 'the counter to lapse', 4000, 50)
  // A replica with a true clock now.
  const next = await acquire('token-true-00000000002', (await nodeUs()) + 1000)
  t.ok(next > ahead, `after the counter lapsed: ${next} > ${ahead}`)
})

t.test('(b) across an empty Redis restart with a short retention', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { fenceRetentionMs: 1000, logLevel: 'silent' })
  const before = await grantFence(app, 'restarted')
  await redis.kill()
  await redis.restart()
  let after: number | undefined
  await until(
    async () => {
      after = await grantFence(app, 'restarted').catch(() => undefined)
      return after !== undefined
    },
    'grants again after the restart',
    5000,
    100,
  )
  t.ok(after! > before, `after an empty restart: ${after} > ${before}`)
})

/** A redis-server whose clock a shim controls, and an app whose clock guard probation is 2 s (MAX_TTL_MS, no lock-delays). */
async function shimmed(t: Test, fenceRetentionMs: number) {
  const clock = await clockShim()
  const redis = await startRedis({ t, env: clock.env })
  const started = await startApp(t, [redis.url], {
    fenceRetentionMs,
    maxTtlMs: 2000,
    maxLockDelayMs: 0,
    defaultTtlMs: 1000,
    logLevel: 'warn',
  })
  const state = async () => (await started.app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].clock.state as string
  const settle = async (what: string) => {
    await until(async () => (await state()) === 'untrusted', `${what}: distrusted`, 4000, 50)
    await until(async () => (await state()) === 'trusted', `${what}: trusted again`, 8000, 100)
  }
  await until(async () => (await state()) === 'trusted', 'first samples', 4000, 50)
  return { clock, redis, app: started.app, state, settle }
}

t.test('(c) the node clock stepped back by less than the retention: the counter keeps fences rising', async (t) => {
  const { clock, app, settle } = await shimmed(t, 60_000)
  // A node clock 20 s fast: its TIME, not the service's hint, floors the fence.
  await clock.step(20_000)
  await settle('a step forward')
  const fast = await grantFence(app, 'stepped')
  t.ok(fast > (Date.now() + 15_000) * 1000, 'the fence follows the fast node clock')
  // Corrected by 20 s (< 60 s): TIME and the hint are both below the last fence now.
  await clock.step(-20_000)
  await settle('the step back')
  const corrected = await grantFence(app, 'stepped')
  t.equal(corrected, fast + 1, `the counter's next value: ${corrected} = ${fast} + 1, not the clock's ~${Date.now() * 1000 + 1e6}`)
})

t.test('(c) a step back by more than the retention: the clock guard distrusts the node (503) until it has behaved', async (t) => {
  const { clock, app, state, redis } = await shimmed(t, 5000)
  const before = await grantFence(app, 'far')
  await clock.step(-10_000)
  const stepped = performance.now()
  await until(async () => (await state()) === 'untrusted', 'distrusted', 4000, 50)
  t.ok(performance.now() - stepped < 2500, 'distrusted at the next sample')
  // The counter's expiry is a time on the node's own clock: a step back makes it last longer, not less.
  const client = redis.client()
  t.teardown(() => client.quit())
  const left = await client.pttl(lockKeys(PREFIX, 'lock', 'far').fence)
  t.ok(left > 10_000, `the counter now outlives the step (PTTL ${left})`)
  const refused = await app.inject({ method: 'POST', url: '/locks/far' })
  t.equal(refused.statusCode, 503, 'no grant meanwhile')
  t.equal(refused.json().error, 'backend_unavailable')
  t.equal((await app.inject({ method: 'GET', url: '/locks/far/fence/1' })).statusCode, 503, 'nor a fence check')
  await until(async () => (await state()) === 'trusted', 'trusted again', 8000, 100)
  const after = await grantFence(app, 'far')
  t.ok(after > before, `then fences go on rising: ${after} > ${before}`)
})
