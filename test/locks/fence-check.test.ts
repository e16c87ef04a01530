/**
 * GET /locks/:key/fence/:fence, /rwlocks/…, /semaphores/…: `current` only while a live hold carries
 * exactly that fence; `fence` the fence asked about when current, else the live hold's (the newest of
 * several), null when nothing is held; `held` whether anything is. On one node and on a quorum (the vote
 * rule: a hold counts while a majority of its copies carries the fence).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { lockKeys } from '../../src/locks/keys.js'
import { fenceCheckSchema } from '../../src/http/schemas/fence-check.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { startApp, type TestApp } from '../../harness/app.js'
import { clockShim } from '../../harness/clock-shim.js'
import { until } from '../helpers/until.js'
import { forgetHold } from '../helpers/plain-hold.js'

type App = TestApp['app']

async function check(app: App, path: string): Promise<{ current: boolean; fence: number | null; held: boolean }> {
  const res = await app.inject({ method: 'GET', url: path })
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${res.body}`)
  return fenceCheckSchema.strict().parse(res.json())
}

async function grant(app: App, method: 'POST', url: string): Promise<{ fence: number; token: string }> {
  const res = await app.inject({ method, url })
  if (res.statusCode !== 201) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

t.test('a lock: current while its hold is live, not after release, expiry or a newer hold', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
  t.same(await check(app, '/locks/fc/fence/1'), { current: false, fence: null, held: false }, 'never held')

  const first = await grant(app, 'POST', '/locks/fc?ttl=30s')
  t.same(await check(app, `/locks/fc/fence/${first.fence}`), { current: true, fence: first.fence, held: true }, 'the live hold')
  t.same(await check(app, `/locks/fc/fence/${first.fence - 1}`), { current: false, fence: first.fence, held: true }, 'an older fence')
  t.same(await check(app, `/locks/fc/fence/${first.fence + 1}`), { current: false, fence: first.fence, held: true }, 'a fence not issued')
  t.same(await check(app, `/rwlocks/fc/fence/${first.fence}`), { current: false, fence: null, held: false }, 'another namespace')

  await app.inject({ method: 'DELETE', url: '/locks/fc', headers: { 'lock-token': first.token } })
  t.same(await check(app, `/locks/fc/fence/${first.fence}`), { current: false, fence: null, held: false }, 'after release')

  const second = await grant(app, 'POST', '/locks/fc?ttl=300ms')
  t.ok(second.fence > first.fence)
  t.same(await check(app, `/locks/fc/fence/${first.fence}`), { current: false, fence: second.fence, held: true }, 'a newer holder')
  await sleep(400)
  t.same(await check(app, `/locks/fc/fence/${second.fence}`), { current: false, fence: null, held: false }, 'after expiry')
})

t.test('a read-write lock: any live read hold with the fence; the writer; the newest of several readers', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
  const r1 = await grant(app, 'POST', '/rwlocks/rw/read?ttl=30s')
  const r2 = await grant(app, 'POST', '/rwlocks/rw/read?ttl=30s')
  t.same(await check(app, `/rwlocks/rw/fence/${r1.fence}`), { current: true, fence: r1.fence, held: true }, 'the older reader')
  t.same(await check(app, `/rwlocks/rw/fence/${r2.fence}`), { current: true, fence: r2.fence, held: true }, 'the newer reader')
  t.same(
    await check(app, `/rwlocks/rw/fence/${r1.fence - 1}`),
    { current: false, fence: r2.fence, held: true },
    'a fence no reader has: the newest reader is shown',
  )
  await app.inject({ method: 'DELETE', url: '/rwlocks/rw/read', headers: { 'lock-token': r2.token } })
  t.same(await check(app, `/rwlocks/rw/fence/${r2.fence}`), { current: false, fence: r1.fence, held: true }, 'a released reader')
  await app.inject({ method: 'DELETE', url: '/rwlocks/rw/read', headers: { 'lock-token': r1.token } })
  const w = await grant(app, 'POST', '/rwlocks/rw/write?ttl=30s')
  t.same(await check(app, `/rwlocks/rw/fence/${w.fence}`), { current: true, fence: w.fence, held: true }, 'the writer')
  t.same(await check(app, `/rwlocks/rw/fence/${r1.fence}`), { current: false, fence: w.fence, held: true }, 'a former reader')
})

t.test('a semaphore: any live permit hold with the fence', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
  const a = await grant(app, 'POST', '/semaphores/sem?limit=3&ttl=30s')
  const b = await grant(app, 'POST', '/semaphores/sem?limit=3&permits=2&ttl=300ms')
  t.same(await check(app, `/semaphores/sem/fence/${a.fence}`), { current: true, fence: a.fence, held: true })
  t.same(await check(app, `/semaphores/sem/fence/${b.fence}`), { current: true, fence: b.fence, held: true })
  t.same(await check(app, `/locks/sem/fence/${a.fence}`), { current: false, fence: null, held: false }, 'another namespace')
  await sleep(400)
  t.same(await check(app, `/semaphores/sem/fence/${b.fence}`), { current: false, fence: a.fence, held: true }, 'an expired permit hold')
})

t.test('a bad fence or key is 400; an unknown query parameter too', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
  for (const path of [
    '/locks/k/fence/0',
    '/locks/k/fence/-3',
    '/locks/k/fence/1.5',
    '/locks/k/fence/abc',
    '/locks/k/fence/9007199254740992',
    '/locks/k/fence/99999999999999999999',
    '/rwlocks/k/fence/1e5',
    '/semaphores/k/fence/%20',
    '/locks/k%7Bx%7D/fence/1',
    '/locks/k/fence/1?token=abc',
  ]) {
    const res = await app.inject({ method: 'GET', url: path })
    t.equal(res.statusCode, 400, `${path} → 400`)
    t.equal(res.json().error, 'invalid_request', path)
  }
  t.equal((await app.inject({ method: 'GET', url: '/locks/k/fence/9007199254740991' })).statusCode, 200, '2^53 − 1 is a fence')
})

t.test('a quorum: a hold counts while a majority carries the fence; a minority of nodes cannot answer', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { logLevel: 'silent', nodeTimeoutMs: 250 },
  )
  const held = await grant(app, 'POST', '/locks/q?ttl=60s')
  t.same(await check(app, `/locks/q/fence/${held.fence}`), { current: true, fence: held.fence, held: true })

  // Take the hold off one node, then off a second: a majority no longer carries it.
  const keys = lockKeys('lock-service:', 'lock', 'q')
  const clients = nodes.map((n) => n.client())
  t.teardown(() => Promise.all(clients.map((c) => c.quit())))
  await forgetHold(clients[0]!, keys)
  t.same(await check(app, `/locks/q/fence/${held.fence}`), { current: true, fence: held.fence, held: true }, 'two of three still carry it')
  await forgetHold(clients[1]!, keys)
  t.same(await check(app, `/locks/q/fence/${held.fence}`), { current: false, fence: null, held: false }, 'only one of three carries it')

  const again = await grant(app, 'POST', '/locks/q2?ttl=60s')
  await nodes[2]!.kill()
  t.same(await check(app, `/locks/q2/fence/${again.fence}`), { current: true, fence: again.fence, held: true }, 'one node down')
  await nodes[1]!.kill()
  const res = await app.inject({ method: 'GET', url: `/locks/q2/fence/${again.fence}` })
  t.equal(res.statusCode, 503, 'two of three down: cannot answer')
  t.equal(res.json().error, 'backend_unavailable')
})

t.test('a quorum: a node whose clock is distrusted does not count toward current (the vote rule)', async (t) => {
  const clock = await clockShim()
  const nodes = await startRedisCluster(3, { t, env: (i) => (i === 0 ? clock.env : undefined) })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { logLevel: 'silent', nodeTimeoutMs: 250, maxTtlMs: 60_000 },
  )
  const held = await grant(app, 'POST', '/locks/voted?ttl=60s')
  await clock.setRate(1.1)
  await until(
    async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().nodes[0].vote === 'clock_untrusted',
    'node 0 distrusted',
    5000,
    50,
  )
  const client = nodes[1]!.client()
  t.teardown(() => client.quit())
  await forgetHold(client, lockKeys('lock-service:', 'lock', 'voted'))
  // Nodes 0 and 2 still carry the hold, but only node 2 may vote: one of the two counted answers.
  t.same(await check(app, `/locks/voted/fence/${held.fence}`), { current: false, fence: null, held: false })
})

t.test("an election: current while its term is the leader's; not after resignation or a new term", async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
  const campaign = async (candidate: string) => {
    const res = await app.inject({ method: 'POST', url: `/elections/el/campaign?candidate=${candidate}&ttl=30s` })
    t.equal(res.statusCode, 201, res.body)
    return res.json() as { term: number; token: string }
  }
  t.same(await check(app, '/elections/el/fence/1'), { current: false, fence: null, held: false }, 'no leader yet')
  const first = await campaign('a')
  t.same(await check(app, `/elections/el/fence/${first.term}`), { current: true, fence: first.term, held: true }, "the leader's term")
  t.same(await check(app, `/locks/el/fence/${first.term}`), { current: false, fence: null, held: false }, 'not a lock')
  t.equal((await app.inject({ method: 'DELETE', url: '/elections/el', headers: { 'lock-token': first.token } })).statusCode, 200)
  t.same(await check(app, `/elections/el/fence/${first.term}`), { current: false, fence: null, held: false }, 'after resigning')
  const second = await campaign('b')
  t.ok(second.term > first.term)
  t.same(await check(app, `/elections/el/fence/${first.term}`), { current: false, fence: second.term, held: true }, 'an older term')
  t.equal((await app.inject({ method: 'GET', url: '/elections/el/fence/0' })).statusCode, 400)
})
