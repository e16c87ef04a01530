import t, { type Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { lockStateSchema, rwLockStateSchema } from '../../src/http/schemas/locks.js'
import { semaphoreStateSchema } from '../../src/http/schemas/semaphores.js'
import { startApp } from '../../harness/app.js'
import { lockctl } from '../helpers/lockctl.js'
import { startRedis, startRedisCluster, type RedisProcess } from '../../harness/redis-server.js'

/** Owner labels (issue #16): every acquire may carry one; inspect, listings and a 409 show it, never a token. */
async function ownerSuite(t: Test, nodes: readonly RedisProcess[]): Promise<void> {
  const { app, logText } = await startApp(
    t,
    nodes.map((n) => n.url),
  )
  const call = async (method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, token?: string, body?: object) => {
    const res = await app.inject({ method, url, headers: token ? { 'lock-token': token } : {}, ...(body ? { payload: body } : {}) })
    const json = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(json)
    return { status: res.statusCode, body: json }
  }
  const tok = (name: string) => `${name}-owner-token-0123456789`
  let n = 0
  const fresh = () => `owner${++n}-${Date.now()}`

  t.test('an exclusive lock: inspect, the listing and a 409 name the owner; never the token', async (t) => {
    const key = fresh()
    t.equal((await call('POST', `/locks/${key}`, tok('a'), { owner: 'billing-worker-3', ttlMs: 10_000 })).status, 201)
    const state = lockStateSchema.parse((await call('GET', `/locks/${key}`)).body)
    t.equal(state.owner, 'billing-worker-3', 'inspect shows the owner')
    const held = await call('POST', `/locks/${key}`, tok('b'), { owner: 'someone-else' })
    t.equal(held.status, 409)
    t.equal(held.body.error, 'lock_held')
    t.same(held.body.owners, ['billing-worker-3'], 'the 409 names the owner in the way')
    const waited = await call('POST', `/locks/${key}?wait=200ms`, tok('b'))
    t.equal(waited.status, 409)
    t.same(waited.body.owners, ['billing-worker-3'], 'also after waiting')
    const page = await call('GET', `/locks?prefix=${key}`)
    t.same(
      (page.body.items as { key: string; owner?: string }[]).map((i) => [i.key, i.owner]),
      [[key, 'billing-worker-3']],
      'the admin listing shows it',
    )
    // A re-acquire without an owner keeps the label; with one, changes it.
    t.equal((await call('POST', `/locks/${key}`, tok('a'))).status, 200)
    t.equal(lockStateSchema.parse((await call('GET', `/locks/${key}`)).body).owner, 'billing-worker-3')
    t.equal((await call('POST', `/locks/${key}?owner=${encodeURIComponent('billing worker 4 ✓')}`, tok('a'))).status, 200)
    t.equal(lockStateSchema.parse((await call('GET', `/locks/${key}`)).body).owner, 'billing worker 4 ✓', 'query owner, any printable text')
    // The label goes with the hold: the next holder without one shows none.
    t.equal((await call('DELETE', `/locks/${key}`, tok('a'))).status, 200)
    t.equal((await call('POST', `/locks/${key}`, tok('c'))).status, 201)
    const next = lockStateSchema.parse((await call('GET', `/locks/${key}`)).body)
    t.equal(next.owner, undefined, 'no owner once its hold is gone')
    const unlabelled = await call('POST', `/locks/${key}`, tok('d'))
    t.equal(unlabelled.status, 409)
    t.notOk('owners' in unlabelled.body, 'a 409 with no labelled hold in the way: no owners')
    t.notOk(logText().includes(tok('a')), 'no token in the logs')
  })

  t.test('a hold handed over to a waiter carries its owner', async (t) => {
    const key = fresh()
    t.equal((await call('POST', `/locks/${key}`, tok('a'), { owner: 'first', ttlMs: 10_000 })).status, 201)
    const waiting = call('POST', `/locks/${key}`, tok('b'), { owner: 'second', waitMs: 5000 })
    await new Promise((resolve) => setTimeout(resolve, 150))
    t.equal((await call('DELETE', `/locks/${key}`, tok('a'))).status, 200)
    t.equal((await waiting).status, 201, 'the waiter got it')
    t.equal(lockStateSchema.parse((await call('GET', `/locks/${key}`)).body).owner, 'second')
  })

  t.test('read-write locks: the writer and the readers in the way, each read hold in the admin view', async (t) => {
    const key = fresh()
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r1'), { owner: 'reader-1', ttlMs: 10_000 })).status, 201)
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r2'), { ttlMs: 10_000 })).status, 201)
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r3'), { owner: 'reader-3', ttlMs: 10_000 })).status, 201)
    const held = await call('POST', `/rwlocks/${key}/write`, tok('w'), { owner: 'writer' })
    t.equal(held.status, 409)
    t.same(held.body.owners, ['reader-1', 'reader-3'], 'the 409 names the labelled readers in the way')
    const state = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}?readers=true`)).body)
    t.same(state.owners, ['reader-1', 'reader-3'])
    t.same(
      state.readerHolds?.map((h) => h.owner),
      ['reader-1', undefined, 'reader-3'],
      'each read hold with its owner, by fence',
    )
    for (const r of ['r1', 'r2', 'r3']) await call('DELETE', `/rwlocks/${key}/read`, tok(r))
    t.equal((await call('POST', `/rwlocks/${key}/write`, tok('w'), { owner: 'writer', ttlMs: 10_000 })).status, 201)
    const written = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}`)).body)
    t.equal(written.writer?.owner, 'writer')
    t.same(written.owners, ['writer'])
    t.same((await call('POST', `/rwlocks/${key}/read`, tok('r1'))).body.owners, ['writer'])
  })

  t.test('semaphores: owners of the holds, bounded to 10', async (t) => {
    const key = fresh()
    for (let i = 0; i < 12; i++) {
      // Holds are named by expiry (ties by token: s10 before s9), so each expires 10 ms after the one
      // before, however many are granted within one millisecond.
      const res = await call('POST', `/semaphores/${key}?limit=12&ttl=${10_000 + i * 10}ms`, tok(`s${i}`), { owner: `sem-holder-${i}` })
      t.equal(res.status, 201)
    }
    const state = semaphoreStateSchema.parse((await call('GET', `/semaphores/${key}?holds=true`)).body)
    t.equal(state.owners?.length, 10, 'at most 10 owners named')
    t.same(
      state.holds?.map((h) => h.owner),
      Array.from({ length: 12 }, (_, i) => (i < 10 ? `sem-holder-${i}` : undefined)),
      'the admin view names the first 10 holds',
    )
    const full = await call('POST', `/semaphores/${key}?limit=12`, tok('late'))
    t.equal(full.status, 409)
    t.equal((full.body.owners as string[]).length, 10)
  })

  t.test("a session's owner labels the holds bound to it that have none of their own", async (t) => {
    const opened = await call('POST', '/sessions', undefined, { ttlMs: 10_000, owner: 'sess-owner-label' })
    t.equal(opened.status, 201)
    const session = String(opened.body.id)
    const [lock, semaphore, own] = [fresh(), fresh(), fresh()]
    t.equal((await call('POST', `/locks/${lock}`, tok('s1'), { session })).status, 201)
    t.equal((await call('POST', `/semaphores/${semaphore}?limit=2`, tok('s2'), { session })).status, 201)
    t.equal((await call('POST', `/locks/${own}`, tok('s3'), { session, owner: 'its-own-label' })).status, 201)

    t.equal(lockStateSchema.parse((await call('GET', `/locks/${lock}`)).body).owner, 'sess-owner-label', 'inspect')
    t.same((await call('POST', `/locks/${lock}`, tok('other'))).body.owners, ['sess-owner-label'], 'the 409')
    const page = await call('GET', `/locks?prefix=${lock}`)
    t.same(
      (page.body.items as { owner?: string }[]).map((i) => i.owner),
      ['sess-owner-label'],
      'the listing',
    )
    const sem = semaphoreStateSchema.parse((await call('GET', `/semaphores/${semaphore}?holds=true`)).body)
    t.same(
      sem.holds?.map((h) => h.owner),
      ['sess-owner-label'],
      "the semaphore's holds",
    )
    t.equal(lockStateSchema.parse((await call('GET', `/locks/${own}`)).body).owner, 'its-own-label', 'a label of its own wins')
    t.equal((await call('DELETE', `/sessions/${session}`)).status, 200)
  })

  t.test('bad owners are 400 and change nothing', async (t) => {
    const key = fresh()
    for (const [what, owner] of [
      ['empty', ''],
      ['too long', 'x'.repeat(201)],
      ['a control character', 'worker\n3'],
      ['a number', 3],
    ] as const) {
      const res = await call('POST', `/locks/${key}`, tok('a'), { owner })
      t.equal(res.status, 400, what)
      t.equal(res.body.error, 'invalid_request', what)
    }
    t.equal((await call('POST', `/locks/${key}?owner=a&ttl=1s`, tok('a'), { owner: 'b' })).status, 400, 'query and body disagree')
    t.equal((await call('POST', `/locks/${key}?owner=${'y'.repeat(201)}`, tok('a'))).status, 400, 'too long in the query')
    t.equal((await call('GET', `/locks/${key}`)).status, 404, 'nothing was taken')
    t.equal((await call('POST', `/locks/${key}`, tok('a'), { owner: 'z'.repeat(200) })).status, 201, '200 characters is fine')
  })
}

t.test('owners on one Redis', async (t) => {
  await ownerSuite(t, [await startRedis({ t })])
})

t.test('owners on a quorum of 3', async (t) => {
  await ownerSuite(t, await startRedisCluster(3, { t }))
})

t.test('lockctl: acquire --owner; status and list show the owners', async (t) => {
  const { app } = await startApp(t, [(await startRedis({ t })).url], { logLevel: 'warn' })
  const opts = { url: await app.listen({ port: 0, host: '127.0.0.1' }) }
  const acquired = await lockctl(['acquire', 'own:cli', '--ttl', '30s', '--owner', 'nightly report'], opts)
  t.equal(acquired.code, 0, acquired.stderr)
  const status = await lockctl(['status', 'own:cli'], opts)
  t.equal((JSON.parse(status.stdout) as { owner?: string }).owner, 'nightly report', 'status: the owner')
  t.match(
    (await lockctl(['list', '--prefix', 'own:'], opts)).stdout,
    /^own:cli exclusive fence=\d+ remainingMs=\d+ holdCount=1 waiters=0 owner=nightly report$/m,
  )
  t.equal((await lockctl(['acquire', 'own:sem', '--limit', '2', '--owner', 'w1'], opts)).code, 0)
  t.match((await lockctl(['list', '--semaphore', '--prefix', 'own:'], opts)).stdout, /^own:sem semaphore .* owners=\["w1"\]$/m)
  t.equal((await lockctl(['acquire', 'own:rw', '--read', '--owner', 'r1'], opts)).code, 0)
  t.match((await lockctl(['list', '--rw', '--prefix', 'own:'], opts)).stdout, /^own:rw read .* owners=\["r1"\]$/m)
  const held = await lockctl(['acquire', 'own:cli'], opts)
  t.equal(held.code, 75, 'held: 75')
  t.match(held.stderr, /nightly report|held/, 'the refusal says so')
  t.equal((await lockctl(['acquire', 'own:bad', '--owner', ''], opts)).code, 64, 'an empty owner is a usage error')
})
