/**
 * A lock's key in a form this version's scripts do not know (what a newer version might keep there,
 * as an older one meets this version's plain holds: docs/operations.md#upgrading) makes the scripts
 * fail before they write: a 503 naming the Redis error, nothing granted or changed, every other key and
 * the readiness probe unaffected.
 */
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

t.test('a lock key of a type the scripts do not know: 503, nothing written, other keys served', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'silent' })
  const client = redis.client()
  t.teardown(() => client.quit())
  await client.sadd('lock-service:lock:{odd}', 'from another version')
  const before = (await client.keys('*')).sort()
  for (const [method, url] of [
    ['POST', '/locks/odd'],
    ['POST', '/locks/odd?wait=1s'],
    ['PUT', '/locks/odd/renew'],
    ['DELETE', '/locks/odd'],
    ['GET', '/locks/odd'],
  ] as const) {
    const res = await app.inject({ method, url, headers: { 'lock-token': 'token-from-this-version-01' } })
    t.equal(res.statusCode, 503, `${method} ${url}`)
    t.match(res.json(), { error: 'backend_unavailable', nodes: [{ lastError: { message: /WRONGTYPE/ } }] })
  }
  t.same((await client.keys('*')).sort(), before, 'nothing written')
  t.same(await client.smembers('lock-service:lock:{odd}'), ['from another version'])
  t.equal((await app.inject({ method: 'POST', url: '/locks/other' })).statusCode, 201, 'another lock is granted')
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'still ready')
})
