import { PassThrough } from 'node:stream'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { writeAuthFile } from '../helpers/auth-file.js'
import { startRedis } from '../../harness/redis-server.js'
import { sessionSuite } from '../suites/session.js'

t.test('sessions on one Redis', async (t) => {
  await sessionSuite(t, [await startRedis({ t })])
})

t.test("with API keys: a session is its key's alone; MAX_SESSIONS_PER_KEY", async (t) => {
  const redis = await startRedis({ t })
  const config = loadConfig({
    REDIS_URLS: redis.url,
    AUTH_FILE: writeAuthFile([
      { name: 'billing', secret: 'billing-secret-0123456789', prefixes: ['billing:'] },
      { name: 'other', secret: 'other-secret-0123456789', prefixes: ['other:'] },
    ]),
    MAX_SESSIONS_PER_KEY: '2',
    LOG_LEVEL: 'warn',
  })
  const app = await buildApp(config, { logStream: new PassThrough() })
  t.teardown(() => app.close())
  const as = (secret: string) => ({ authorization: `Bearer ${secret}` })
  const billing = as('billing-secret-0123456789')
  const other = as('other-secret-0123456789')
  const open = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/sessions', headers, payload: { ttlMs: 2000 } })
  t.equal((await app.inject({ method: 'POST', url: '/sessions' })).statusCode, 401, 'no key: 401')
  const first = await open(billing)
  t.equal(first.statusCode, 201)
  const id = (first.json() as { id: string }).id
  t.equal((await open(billing)).statusCode, 201)
  const third = await open(billing)
  t.equal(third.statusCode, 429, 'a third live session of one key: 429')
  t.equal((third.json() as { error: string }).error, 'too_many_sessions')
  t.equal((await open(other)).statusCode, 201, 'another key has its own count')
  for (const [method, url] of [
    ['GET', `/sessions/${id}`],
    ['PUT', `/sessions/${id}/keepalive`],
    ['DELETE', `/sessions/${id}`],
  ] as const) {
    const res = await app.inject({ method, url, headers: other })
    t.equal(res.statusCode, 404, `${method} by another key: 404, as if it did not exist`)
  }
  const bound = await app.inject({ method: 'POST', url: '/locks/other:x', headers: other, payload: { session: id } })
  t.equal(bound.statusCode, 404, "binding to another key's session: 404")
  t.equal((await app.inject({ method: 'POST', url: '/locks/billing:x', headers: billing, payload: { session: id } })).statusCode, 201)
  t.equal((await app.inject({ method: 'DELETE', url: `/sessions/${id}`, headers: billing })).statusCode, 200, 'its own key closes it')
  t.equal((await open(billing)).statusCode, 201, 'a closed session no longer counts')
})

t.test('lock_sessions counts live sessions; a lapse without DELETE counts in lock_session_expiries_total', async (t) => {
  const redis = await startRedis({ t })
  const app = await buildApp(loadConfig({ REDIS_URLS: redis.url, LOG_LEVEL: 'warn' }), { logStream: new PassThrough() })
  t.teardown(() => app.close())
  const metric = async (name: string) => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith(`${name} `))
    return Number(line?.split(' ')[1])
  }
  const open = async (ttlMs: number) =>
    ((await app.inject({ method: 'POST', url: '/sessions', payload: { ttlMs } })).json() as { id: string }).id
  // Lapsing sessions of 2 s, with wide margins around each step (a loaded machine answers slowly).
  const lapse = 2000
  const short = await open(lapse)
  await open(lapse)
  const lastShortOpened = Date.now()
  const kept = await open(lapse)
  const closed = await open(60_000)
  await open(60_000)
  await app.sessions.census()
  t.equal(await metric('lock_sessions'), 5, 'five sessions open')
  t.equal(await metric('lock_session_expiries_total'), 0)
  t.equal((await app.inject({ method: 'DELETE', url: `/sessions/${closed}` })).statusCode, 200)
  await new Promise((r) => setTimeout(r, lapse / 2))
  t.equal((await app.inject({ method: 'PUT', url: `/sessions/${kept}/keepalive` })).statusCode, 200)
  // Past the short ones' lapse; the kept one now lapses about lapse / 2 later.
  await new Promise((r) => setTimeout(r, Math.max(0, lastShortOpened + lapse + 100 - Date.now())))
  await app.sessions.census()
  t.equal(await metric('lock_sessions'), 2, 'the kept one and the long one are left')
  t.equal(await metric('lock_session_expiries_total'), 2, 'two lapsed; the closed one is not an expiry')
  t.equal((await app.inject({ method: 'GET', url: `/sessions/${short}` })).statusCode, 404, 'and a lapsed one is gone')
  await app.sessions.census()
  t.equal(await metric('lock_session_expiries_total'), 2, 'a lapse counts once')
})
