import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { Redis } from 'ioredis'
import { clockShim } from '../../harness/clock-shim.js'
import type { Assert } from '../../harness/history.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'

// Loose bounds: a loaded 2-core machine may delay any round trip by tens of ms.
const SLACK_MS = 150

/** How far the server's clock is ahead of ours, via TIME and via TIME inside Lua. */
async function lead(redis: Redis): Promise<{ time: number; lua: number }> {
  const ms = ([s, us]: [string | number, string | number]) => Number(s) * 1000 + Number(us) / 1000
  const before = Date.now()
  const time = ms((await redis.time()) as unknown as [string, string])
  const lua = ms((await redis.eval("return redis.call('TIME')", 0)) as [number, number])
  const after = Date.now()
  const mid = (before + after) / 2
  return { time: time - mid, lua: lua - mid }
}

function near(t: Assert, actual: number, expected: number, what: string, slack = SLACK_MS): void {
  t.ok(Math.abs(actual - expected) <= slack, `${what}: ${actual.toFixed(0)} ms (expected ${expected.toFixed(0)} ± ${slack})`)
}

t.test('TIME, TIME in Lua and key expiry follow a stepped clock; restart keeps the shim', async (t) => {
  const clock = await clockShim()
  const server = await startRedis({ t, env: clock.env })
  const redis = server.client()
  t.teardown(() => redis.disconnect())

  let l = await lead(redis)
  near(t, l.time, 0, 'real time at start (TIME)')
  near(t, l.lua, 0, 'real time at start (Lua TIME)')

  await redis.set('long', '1', 'PX', 10_000)
  await redis.set('short', '1', 'PX', 3_000)
  await clock.step(5_000)
  l = await lead(redis)
  near(t, l.time, 5_000, 'after step(+5 s) (TIME)')
  near(t, l.lua, 5_000, 'after step(+5 s) (Lua TIME)')
  near(t, await redis.pttl('long'), 5_000, 'PTTL of a 10 s key after the step')
  t.equal(await redis.get('short'), null, 'a 3 s key expired at once')
  t.equal(await redis.eval("return redis.call('EXISTS', KEYS[1])", 1, 'short'), 0, 'also as seen from Lua')

  await clock.step(-5_000)
  near(t, (await lead(redis)).time, 0, 'step(−5 s) steps back')

  await clock.step(10_000)
  await server.restart()
  const again = server.client()
  t.teardown(() => again.disconnect())
  near(t, (await lead(again)).time, 10_000, 'a restarted server runs on the same fake clock')
  await clock.reset()
  near(t, (await lead(again)).time, 0, 'reset() is back on real time')
})

t.test('a rate runs the clock fast, continuously; setRate(1) keeps the lead; reset() drops it', async (t) => {
  const clock = await clockShim()
  const server = await startRedis({ t, env: clock.env })
  const redis = server.client()
  t.teardown(() => redis.disconnect())

  await redis.set('k', '1', 'PX', 10_000)
  const before = (await lead(redis)).time
  await clock.setRate(3)
  const atChange = (await lead(redis)).time
  t.ok(atChange - before < 200, `no jump at the rate change (${(atChange - before).toFixed(0)} ms)`)
  await sleep(1_000)
  const gained = (await lead(redis)).time
  near(t, gained - atChange, 2_000, 'rate 3 for ~1 s gains ~2 s', 300)
  t.ok((await redis.pttl('k')) < 10_000 - 2_500, 'expiry counts fake time too')

  await clock.setRate(1)
  const kept = (await lead(redis)).time
  await sleep(500)
  near(t, (await lead(redis)).time, kept, 'at rate 1 again the lead stays (it neither grows nor vanishes)')
  t.ok(kept > 1_500, `the lead is kept after setRate(1): ${kept.toFixed(0)} ms`)

  await clock.reset()
  near(t, (await lead(redis)).time, 0, 'reset() steps back to real time')
})

t.test('clusters: env per index, applied on launch and restart; other servers keep real time', async (t) => {
  const clock = await clockShim()
  await clock.step(60_000)
  const [shimmed, plain] = await startRedisCluster(2, { t, env: (i) => (i === 0 ? clock.env : undefined) })
  const a = shimmed!.client()
  const b = plain!.client()
  t.teardown(() => {
    a.disconnect()
    b.disconnect()
  })
  near(t, (await lead(a)).time, 60_000, 'node 0 is a minute ahead')
  near(t, (await lead(b)).time, 0, 'node 1 runs on real time')
  await shimmed!.restart()
  const a2 = shimmed!.client()
  t.teardown(() => a2.disconnect())
  near(t, (await lead(a2)).time, 60_000, 'still a minute ahead after restart')
})
