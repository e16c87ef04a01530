import t from 'tap'
import { buildApp } from '../../src/app.js'
import { configFrom } from '../../src/config.js'
import { startRedis } from '../../harness/redis-server.js'

async function grantFence(app: Awaited<ReturnType<typeof buildApp>>, key: string, ttl = '60s'): Promise<number> {
  const res = await app.inject({ method: 'POST', url: `/locks/${key}?ttl=${ttl}` })
  if (res.statusCode !== 201) throw new Error(`expected 201, got ${res.statusCode}: ${res.body}`)
  const fence = res.json().fence as number
  await app.inject({ method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': res.json().token } })
  return fence
}

t.test('fences strictly increase across a service restart and a Redis restart that lost every key', async (t) => {
  const redis = await startRedis({ t })
  const config = configFrom({ redisUrls: [redis.url], logLevel: 'silent' })
  const seen: number[] = []

  let app = await buildApp(config)
  for (let i = 0; i < 5; i++) seen.push(await grantFence(app, 'fenced'))
  await app.close()

  app = await buildApp(config)
  seen.push(await grantFence(app, 'fenced'))
  t.ok(seen.at(-1)! > seen.at(-2)!, 'after a service restart')

  await redis.kill()
  await redis.restart()
  const client = redis.client()
  t.teardown(() => client.quit())
  t.equal(await client.dbsize(), 0, 'Redis came back empty: the fence counter is gone')
  // ioredis reconnects on its own; give it a moment before asking.
  let fence: number | undefined
  for (let i = 0; i < 50 && fence === undefined; i++) {
    fence = await grantFence(app, 'fenced').catch(async () => {
      await new Promise((r) => setTimeout(r, 100))
      return undefined
    })
  }
  t.ok(fence !== undefined, 'grants again after the Redis restart')
  seen.push(fence!)
  t.ok(seen.at(-1)! > seen.at(-2)!, `after data loss: ${seen.at(-1)} > ${seen.at(-2)}`)

  for (let i = 1; i < seen.length; i++) t.ok(seen[i]! > seen[i - 1]!, `fence ${i} increases`)
  t.ok(
    seen.every((f) => Number.isSafeInteger(f)),
    'every fence is a safe integer (< 2^53)',
  )

  const [seconds, micros] = (await client.time()) as [string | number, string | number]
  const redisNowUs = Number(seconds) * 1e6 + Number(micros)
  const next = await grantFence(app, 'fenced')
  t.ok(next >= redisNowUs, 'never below the Redis clock in microseconds')
  await app.close()
})

t.test('the fence counter outlives the hold but not forever', async (t) => {
  const redis = await startRedis({ t })
  const app = await buildApp(configFrom({ redisUrls: [redis.url], logLevel: 'silent', keyPrefix: 'p:' }))
  t.teardown(() => app.close())
  await grantFence(app, 'ttl-check')
  const client = redis.client()
  t.teardown(() => client.quit())
  t.same(await client.keys('*'), ['p:lock:{ttl-check}:fence'], 'after release only the fence counter is left, under the hash tag')
  const ttl = await client.pttl('p:lock:{ttl-check}:fence')
  t.ok(ttl > 0, `it expires (in ${Math.round(ttl / 3600000)} h)`)
})
