import t from 'tap'
import { lockListSchema, rwLockListSchema } from '../../src/http/schemas/locks.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

for (const n of [1, 3]) {
  t.test(`listing: SCAN-based pages cover every held lock exactly, never a token (N = ${n})`, async (t) => {
    const nodes = await startRedisCluster(n, { t })
    const { app } = await startApp(
      t,
      nodes.map((r) => r.url),
    )
    const tokens: string[] = []
    // Most are plain holds (kept in the fence counter); every tenth has an owner label (kept in the hash).
    for (let i = 0; i < 230; i++) {
      const owner = i % 10 === 0 ? '&owner=worker' : ''
      const res = await app.inject({ method: 'POST', url: `/locks/team-a:job-${String(i).padStart(3, '0')}?ttl=60s${owner}` })
      tokens.push(res.json().token)
    }
    for (let i = 0; i < 20; i++) await app.inject({ method: 'POST', url: `/locks/team-b:job-${i}` })
    await app
      .inject({ method: 'POST', url: '/locks/team-a:released' })
      .then((r) => app.inject({ method: 'DELETE', url: '/locks/team-a:released', headers: { 'lock-token': r.json().token } }))
    // A plain hold that lapsed is still in its counter's value until something touches the lock: not listed.
    await app.inject({ method: 'POST', url: '/locks/team-a:lapsed?ttl=100ms' })
    await new Promise((r) => setTimeout(r, 150))

    const seen = new Set<string>()
    let cursor: string | null = ''
    let pages = 0
    while (cursor !== null && pages < 100) {
      const res = await app.inject({ method: 'GET', url: `/locks?prefix=team-a:&limit=40${cursor ? `&cursor=${cursor}` : ''}` })
      t.equal(res.statusCode, 200)
      const page = lockListSchema.parse(res.json())
      t.ok(page.items.length <= 40 + 40, `page ${pages} is bounded (${page.items.length})`)
      for (const item of page.items) {
        t.ok(item.key.startsWith('team-a:'), 'only the prefix')
        t.ok(item.fence > 0 && item.remainingMs > 0 && item.holdCount === 1)
        seen.add(item.key)
      }
      for (const token of tokens.slice(0, 5)) t.notOk(res.body.includes(token), 'no token in the listing')
      cursor = page.cursor
      pages++
    }
    t.equal(cursor, null, `the scan completed in ${pages} pages`)
    t.equal(seen.size, 230, 'every held team-a lock was listed, and nothing else (not the released one, nor the lapsed one)')
  })
}

t.test('force-release: an exclusive lock, a write hold, one read hold by fence; waiters move on', async (t) => {
  const redis = await startRedis({ t })
  const { app, logText } = await startApp(t, [redis.url])
  const holder = (await app.inject({ method: 'POST', url: '/locks/stuck?ttl=60s' })).json()
  const waiting = app.inject({ method: 'POST', url: '/locks/stuck?wait=10s' })
  await new Promise((r) => setTimeout(r, 100))
  const forced = await app.inject({ method: 'DELETE', url: '/locks/stuck?force=true' })
  t.same([forced.statusCode, forced.json()], [200, { key: 'stuck', released: true, holdCount: 0 }])
  t.equal((await waiting).statusCode, 201, 'the waiter was woken and granted')
  t.equal(
    (await app.inject({ method: 'PUT', url: '/locks/stuck/renew', headers: { 'lock-token': holder.token } })).json().error,
    'not_owner',
    'the old holder has lost it',
  )
  t.equal((await app.inject({ method: 'DELETE', url: '/locks/nothing-here?force=true' })).statusCode, 404, 'nothing to force: 404')
  t.match(logText(), /"admin":"\(open service\)","action":"force-release","key":"stuck"/)

  const r1 = (await app.inject({ method: 'POST', url: '/rwlocks/shared/read' })).json()
  const r2 = (await app.inject({ method: 'POST', url: '/rwlocks/shared/read' })).json()
  const drop = await app.inject({ method: 'DELETE', url: `/rwlocks/shared/read?force=true&fence=${r1.fence}` })
  t.equal(drop.statusCode, 200)
  const state = (await app.inject({ method: 'GET', url: '/rwlocks/shared' })).json()
  t.equal(state.readers, 1, 'only that read hold was dropped')
  t.equal(
    (await app.inject({ method: 'PUT', url: '/rwlocks/shared/read/renew', headers: { 'lock-token': r2.token } })).statusCode,
    200,
    'the other reader still holds',
  )
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/rwlocks/shared/read?force=true&fence=${r1.fence}` })).statusCode,
    404,
    'that fence is gone',
  )

  await app.inject({ method: 'POST', url: '/rwlocks/w/write' })
  t.equal((await app.inject({ method: 'DELETE', url: '/rwlocks/w/write?force=true' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/rwlocks/w' })).statusCode, 404)

  const list = rwLockListSchema.parse((await app.inject({ method: 'GET', url: '/rwlocks' })).json())
  t.same(
    list.items.map((i) => [i.key, i.readers]),
    [['shared', 1]],
    '/rwlocks lists what is held',
  )
})

t.test('a listing whose node goes down between pages fails with 503 instead of skipping keys', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((r) => r.url),
    { nodeTimeoutMs: 300 },
  )
  for (let i = 0; i < 60; i++) await app.inject({ method: 'POST', url: `/locks/page-${i}` })
  const first = (await app.inject({ method: 'GET', url: '/locks?limit=10' })).json()
  t.match(first.cursor, /^\d\.\d+$/, 'the cursor names the node being scanned')
  await nodes[Number(first.cursor.split('.')[0])]!.kill()
  const next = await app.inject({ method: 'GET', url: `/locks?limit=10&cursor=${first.cursor}` })
  t.equal(next.statusCode, 503)
  t.match(next.json().message, /start the listing again/)
  const again = await app.inject({ method: 'GET', url: '/locks?limit=100' })
  t.equal(again.statusCode, 200, 'a new listing scans a node that answers')
})
