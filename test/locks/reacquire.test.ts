/**
 * A re-acquire by the holder without a TTL keeps the hold's latest TTL (as renew does) — exclusive,
 * read, write, reentrant, on one node and on a quorum of 3; a new hold without one gets
 * DEFAULT_TTL_MS. And the admin views show each read hold's fence (never a token), enough to
 * force-release exactly that one.
 */
import t from 'tap'
import { startRedisCluster } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'
import { writeAuthFile } from '../helpers/auth-file.js'
import { loadConfig } from '../../src/config.js'

const DEFAULT_TTL = 30_000
const token = (n: number) => `reacquire-token-${String(n).padStart(8, '0')}`

for (const n of [1, 3]) {
  t.test(`re-acquire without a TTL keeps the latest TTL (N = ${n})`, async (t) => {
    const nodes = await startRedisCluster(n, { t })
    const { app } = await startApp(
      t,
      nodes.map((r) => r.url),
      { defaultTtlMs: DEFAULT_TTL },
    )
    const paths = [
      ['exclusive', '/locks/ttl-x', '/locks/ttl-x'],
      ['read', '/rwlocks/ttl-r/read', '/rwlocks/ttl-r'],
      ['write', '/rwlocks/ttl-w/write', '/rwlocks/ttl-w'],
    ] as const
    for (const [mode, path, inspectPath] of paths) {
      const headers = { 'lock-token': token(mode.length) }
      const post = async (query = '', payload?: object) =>
        app.inject({ method: 'POST', url: `${path}${query}`, headers, ...(payload ? { payload } : {}) })

      const first = await post('?ttl=5m')
      t.same([first.statusCode, first.json().ttlMs], [201, 300_000], `${mode}: granted for 5 minutes`)
      const again = await post()
      t.same(
        [again.statusCode, again.json().ttlMs, again.json().fence],
        [200, 300_000, first.json().fence],
        `${mode}: re-acquired without a TTL: still 5 minutes, same fence`,
      )
      t.ok(again.json().validityMs > 290_000, `${mode}: validity from the kept TTL (${again.json().validityMs})`)
      const state = (await app.inject({ method: 'GET', url: `${inspectPath}${mode === 'read' ? '?readers=true' : ''}` })).json()
      const remaining = mode === 'read' ? state.readerHolds[0].remainingMs : (state.remainingMs ?? state.writer.remainingMs)
      t.ok(remaining > 290_000, `${mode}: Redis keeps it for 5 minutes (${remaining} ms left), not ${DEFAULT_TTL}`)

      t.equal((await post('?ttl=10s')).json().ttlMs, 10_000, `${mode}: a re-acquire with a TTL sets it`)
      t.equal((await post()).json().ttlMs, 10_000, `${mode}: and the next one without keeps that`)
      const renewed = await app.inject({ method: 'PUT', url: `${path}/renew`, headers, payload: { ttlMs: 20_000 } })
      t.equal(renewed.json().ttlMs, 20_000)
      t.equal((await post()).json().ttlMs, 20_000, `${mode}: after a renew, a re-acquire keeps the renewed TTL`)

      const reentrant = await post('', { reentrant: true })
      t.same(
        [reentrant.statusCode, reentrant.json().ttlMs, reentrant.json().holdCount],
        [200, 20_000, 2],
        `${mode}: reentrant, without a TTL: count 2, TTL kept`,
      )
      await app.inject({ method: 'DELETE', url: path, headers })
      await app.inject({ method: 'DELETE', url: path, headers })

      const fresh = await post()
      t.same([fresh.statusCode, fresh.json().ttlMs], [201, DEFAULT_TTL], `${mode}: a new hold without a TTL gets DEFAULT_TTL_MS`)
      await app.inject({ method: 'DELETE', url: path, headers })
    }
  })
}

t.test('a waiter without a TTL is handed the lock with DEFAULT_TTL_MS', async (t) => {
  const [redis] = await startRedisCluster(1, { t })
  const { app } = await startApp(t, [redis!.url], { defaultTtlMs: DEFAULT_TTL })
  const holder = (await app.inject({ method: 'POST', url: '/locks/ttl-wait?ttl=5m' })).json()
  const waiting = app.inject({ method: 'POST', url: '/locks/ttl-wait?wait=10s' })
  await new Promise((r) => setTimeout(r, 100))
  await app.inject({ method: 'DELETE', url: '/locks/ttl-wait', headers: { 'lock-token': holder.token } })
  const granted = await waiting
  t.same([granted.statusCode, granted.json().ttlMs], [201, DEFAULT_TTL])
})

for (const n of [1, 3]) {
  t.test(`admin views show each read hold's fence and remaining time, never a token (N = ${n})`, async (t) => {
    const nodes = await startRedisCluster(n, { t })
    const { app, logText } = await startApp(
      t,
      nodes.map((r) => r.url),
    )
    const readers = []
    for (const i of [1, 2, 3])
      readers.push(
        (await app.inject({ method: 'POST', url: `/rwlocks/shelf/read?ttl=${i}m`, headers: { 'lock-token': token(100 + i) } })).json(),
      )
    await app.inject({ method: 'POST', url: '/rwlocks/shelf/read', headers: { 'lock-token': token(101) }, payload: { reentrant: true } })

    const plain = await app.inject({ method: 'GET', url: '/rwlocks/shelf' })
    t.equal(plain.json().readerHolds, undefined, 'a plain inspect shows the count only')
    t.equal(plain.json().readers, 3)

    const inspected = await app.inject({ method: 'GET', url: '/rwlocks/shelf?readers=true' })
    t.equal(inspected.statusCode, 200)
    const holds = inspected.json().readerHolds as { fence: number; remainingMs: number; holdCount: number }[]
    t.same(
      holds.map((h) => [h.fence, h.holdCount]),
      readers.map((r, i) => [r.fence, i === 0 ? 2 : 1]),
      'each read hold by fence, with its count',
    )
    holds.forEach((h, i) => {
      t.ok(h.remainingMs > (i + 1) * 60_000 - 5_000 && h.remainingMs <= (i + 1) * 60_000, `hold ${i}: ${h.remainingMs} ms left`)
    })

    const listed = (await app.inject({ method: 'GET', url: '/rwlocks?prefix=shelf' })).json()
    t.same(
      listed.items[0].readerHolds,
      holds.map((h) => ({ ...h, remainingMs: listed.items[0].readerHolds[holds.indexOf(h)].remainingMs })),
      'the listing shows them too',
    )

    // What the service shows is enough to drop exactly one read hold.
    const middle = holds[1]!
    t.equal((await app.inject({ method: 'DELETE', url: `/rwlocks/shelf/read?force=true&fence=${middle.fence}` })).statusCode, 200)
    const left = (await app.inject({ method: 'GET', url: '/rwlocks/shelf?readers=true' }))
      .json()
      .readerHolds.map((h: { fence: number }) => h.fence)
    t.same(left, [readers[0].fence, readers[2].fence], 'that one is gone, the others hold')
    t.equal(
      (await app.inject({ method: 'PUT', url: '/rwlocks/shelf/read/renew', headers: { 'lock-token': token(102) } })).json().error,
      'not_owner',
      'its owner has lost it (others still hold the lock: not_owner)',
    )

    const bodies = inspected.body + JSON.stringify(listed)
    for (const r of readers) t.notOk(bodies.includes(r.token), 'no token in the admin views')
    t.match(
      logText(),
      /"admin":"\(open service\)","action":"inspect read holds","key":"shelf"/,
      'the admin inspect is logged with the request',
    )
  })
}

t.test('?readers=true needs an admin key when API keys are on', async (t) => {
  const [redis] = await startRedisCluster(1, { t })
  const file = writeAuthFile([
    { name: 'app', secret: 'sk_app_readers_0123456789abcdef', prefixes: ['shelf'] },
    { name: 'ops', secret: 'sk_ops_readers_0123456789abcdef', prefixes: [], admin: true },
  ])
  const { auth } = loadConfig({ AUTH_FILE: file })
  const { app } = await startApp(t, [redis!.url], { auth })
  const as = (secret: string) => ({ authorization: `Bearer ${secret}` })
  await app.inject({ method: 'POST', url: '/rwlocks/shelf/read', headers: as('sk_app_readers_0123456789abcdef') })
  const denied = await app.inject({ method: 'GET', url: '/rwlocks/shelf?readers=true', headers: as('sk_app_readers_0123456789abcdef') })
  t.same([denied.statusCode, denied.json().error], [403, 'forbidden'])
  t.equal(
    (await app.inject({ method: 'GET', url: '/rwlocks/shelf', headers: as('sk_app_readers_0123456789abcdef') })).statusCode,
    200,
    'the plain inspect stays open to it',
  )
  const allowed = await app.inject({ method: 'GET', url: '/rwlocks/shelf?readers=true', headers: as('sk_ops_readers_0123456789abcdef') })
  t.equal(allowed.json().readerHolds.length, 1)
})
