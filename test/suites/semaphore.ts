import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { permitGrantSchema, semaphoreListSchema, semaphoreStateSchema } from '../../src/http/schemas/semaphores.js'
import { lockKeys } from '../../src/locks/keys.js'
import { startApp } from '../../harness/app.js'
import type { RedisProcess } from '../../harness/redis-server.js'
import { until } from '../helpers/until.js'

/** /semaphores as issue #15 states it, runnable against one Redis or a quorum of N. */
export async function semaphoreSuite(t: Test, nodes: readonly RedisProcess[]): Promise<void> {
  const { app, config, logText } = await startApp(
    t,
    nodes.map((n) => n.url),
  )
  const call = async (method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, token?: string, body?: object) => {
    const res = await app.inject({ method, url, headers: token ? { 'lock-token': token } : {}, ...(body ? { payload: body } : {}) })
    const json = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(json)
    return { status: res.statusCode, body: json, headers: res.headers }
  }
  const tok = (name: string) => `${name}-sem-token-0123456789`
  let n = 0
  const fresh = () => `sem${++n}-${Date.now()}`
  const state = async (key: string, query = '') => {
    const res = await call('GET', `/semaphores/${key}${query}`)
    return res.status === 200 ? semaphoreStateSchema.parse(res.body) : undefined
  }

  t.test('N holders at once, each with its own token, fence and lease; the next one is refused', async (t) => {
    const key = fresh()
    const grants: ReturnType<typeof permitGrantSchema.parse>[] = []
    for (const name of ['a', 'b', 'c']) {
      const res = await call('POST', `/semaphores/${key}?limit=3&ttl=10s`, tok(name))
      t.equal(res.status, 201, `${name} granted`)
      grants.push(permitGrantSchema.parse(res.body))
    }
    t.same(
      grants.map((g) => [g.mode, g.token, g.permits, g.limit, g.holdCount, g.ttlMs]),
      ['a', 'b', 'c'].map((name) => ['permit', tok(name), 1, 3, 1, 10_000]),
      'the grant shape: mode permit, its own token, 1 permit of 3',
    )
    t.ok(
      grants.every((g, i) => i === 0 || g.fence > (grants[i - 1]?.fence ?? 0)),
      'fences strictly increase across the holds',
    )
    t.ok(
      grants.every((g) => g.validityMs > 9000 && Date.parse(g.expiresAt) > Date.now() + 9000),
      'validityMs and expiresAt as for locks',
    )
    const full = await call('POST', `/semaphores/${key}?limit=3`, tok('d'))
    t.same([full.status, full.body.error], [409, 'lock_held'], 'a fourth is refused: lock_held')
    t.match(full.body.message, /semaphore .* too few free permits/)
    t.ok(
      (full.body.retryAfterMs as number) > 9000 && Number(full.headers['retry-after']) >= 1,
      'with retryAfterMs (when the first hold lapses) and Retry-After',
    )
    t.same(await state(key), { key, limit: 3, permitsInUse: 3, holders: 3, waiters: 0 }, 'inspect: limit, permits in use, holders, waiters')
    t.equal((await call('DELETE', `/semaphores/${key}`, tok('b'))).status, 200, 'b releases')
    t.equal((await call('POST', `/semaphores/${key}?limit=3`, tok('d'))).status, 201, 'and d gets the permit b gave back')
    for (const name of ['a', 'c', 'd'])
      t.same((await call('DELETE', `/semaphores/${key}?token=${tok(name)}`)).body, { key, released: true, holdCount: 0 })
    t.equal((await call('GET', `/semaphores/${key}`)).status, 404, 'nobody holds or waits: 404')
  })

  t.test('weighted holds: permits add up to the limit', async (t) => {
    const key = fresh()
    const big = await call('POST', `/semaphores/${key}`, undefined, { limit: 5, permits: 3, token: tok('big') })
    t.same([big.status, big.body.permits, big.body.limit], [201, 3, 5], '3 of 5 (limit and permits in the body)')
    t.equal((await call('POST', `/semaphores/${key}?limit=5&permits=2`, tok('two'))).status, 201, '2 more: 5 of 5')
    t.equal((await call('POST', `/semaphores/${key}?limit=5`, tok('one'))).status, 409, 'not even 1 more')
    t.same(await state(key), { key, limit: 5, permitsInUse: 5, holders: 2, waiters: 0 })
    await call('DELETE', `/semaphores/${key}`, tok('big'))
    for (const name of ['x', 'y', 'z'])
      t.equal((await call('POST', `/semaphores/${key}?limit=5`, tok(name))).status, 201, `${name}: one of the 3 permits big gave back`)
    t.equal((await call('POST', `/semaphores/${key}?limit=5`, tok('w'))).status, 409, 'and then it is full again')
  })

  t.test('limit mismatch: fixed while anyone holds; set again by the next acquire once nobody does', async (t) => {
    const key = fresh()
    await call('POST', `/semaphores/${key}?limit=4`, tok('a'))
    const keysBefore = await nodes[0]!.keys()
    const other = await call('POST', `/semaphores/${key}?limit=5`, tok('b'))
    t.same(
      [other.status, other.body.error, other.body.limit, other.body.key],
      [409, 'limit_mismatch', 4, key],
      '409 limit_mismatch with the current limit',
    )
    t.match(other.body.message, /limit 4/)
    t.same(await nodes[0]!.keys(), keysBefore, 'nothing changed in Redis')
    const holder = await call('POST', `/semaphores/${key}?limit=2`, tok('a'))
    t.same([holder.status, holder.body.error], [409, 'limit_mismatch'], 'the holder itself may not change it either')
    const waiting = await call('POST', `/semaphores/${key}?limit=9&wait=5s`, tok('c'))
    t.same([waiting.status, waiting.body.error], [409, 'limit_mismatch'], 'a waiting request is refused at once, not parked')
    await call('DELETE', `/semaphores/${key}`, tok('a'))
    const reset = await call('POST', `/semaphores/${key}?limit=5`, tok('b'))
    t.same([reset.status, reset.body.limit], [201, 5], 'nobody held it any more: the new limit holds')
  })

  t.test('idempotent and reentrant re-acquire; the holder keeps its fence, permits and latest TTL', async (t) => {
    const key = fresh()
    const first = permitGrantSchema.parse((await call('POST', `/semaphores/${key}?limit=4&permits=2&ttl=5m`, tok('a'))).body)
    const again = await call('POST', `/semaphores/${key}?limit=4&permits=2`, tok('a'))
    t.same(
      [again.status, again.body.fence, again.body.holdCount, again.body.ttlMs],
      [200, first.fence, 1, 300_000],
      'idempotent: 200, same fence, count 1, the 5-minute TTL kept',
    )
    const re = await call('POST', `/semaphores/${key}`, undefined, { token: tok('a'), limit: 4, permits: 2, reentrant: true })
    t.same([re.status, re.body.fence, re.body.holdCount, re.body.permits], [200, first.fence, 2, 2], 'reentrant: count 2')
    t.equal((await state(key))?.permitsInUse, 2, 'a reentrant hold takes no more permits')
    const other = await call('POST', `/semaphores/${key}?limit=4&permits=3`, tok('a'))
    t.same(
      [other.status, other.body.error, other.body.permits],
      [409, 'permits_mismatch', 2],
      'a re-acquire naming other permits: 409 permits_mismatch',
    )
    t.same((await call('DELETE', `/semaphores/${key}`, tok('a'))).body, { key, released: false, holdCount: 1 })
    t.same((await call('DELETE', `/semaphores/${key}`, tok('a'))).body, { key, released: true, holdCount: 0 })
    t.equal((await call('DELETE', `/semaphores/${key}`, tok('a'))).status, 404, 'then release is 404')
  })

  t.test('renew: owner only; a lapsed hold is gone', async (t) => {
    const key = fresh()
    await call('POST', `/semaphores/${key}?limit=2&ttl=150`, tok('short'))
    await call('POST', `/semaphores/${key}?limit=2&ttl=10s`, tok('long'))
    const renewed = await call('PUT', `/semaphores/${key}/renew`, tok('long'), { ttlMs: 20_000 })
    t.same([renewed.status, renewed.body.mode, renewed.body.ttlMs, renewed.body.permits, renewed.body.limit], [200, 'permit', 20_000, 1, 2])
    t.equal(
      (await call('PUT', `/semaphores/${key}/renew`, tok('nobody'))).body.error,
      'not_owner',
      'a token without a hold: not_owner while others hold',
    )
    await sleep(250)
    t.equal(
      (await call('PUT', `/semaphores/${key}/renew`, tok('short'))).body.error,
      'not_owner',
      'the lapsed hold is gone (others still hold)',
    )
    t.same(await state(key), { key, limit: 2, permitsInUse: 1, holders: 1, waiters: 0 }, 'its permit came back by itself')
    await call('DELETE', `/semaphores/${key}`, tok('long'))
    t.equal((await call('PUT', `/semaphores/${key}/renew`, tok('long'))).status, 404, 'nothing held: 404')
  })

  t.test('expiry returns a crashed holder’s permits: a waiter gets them when its hold lapses', async (t) => {
    const key = fresh()
    await call('POST', `/semaphores/${key}?limit=3&permits=2&ttl=400`, tok('crashed'))
    await call('POST', `/semaphores/${key}?limit=3&ttl=30s`, tok('alive'))
    const started = performance.now()
    const waiter = await call('POST', `/semaphores/${key}?limit=3&permits=2&wait=10s`, tok('waiter'))
    const took = performance.now() - started
    t.same([waiter.status, waiter.body.permits], [201, 2], 'granted the crashed holder’s 2 permits')
    t.ok(took > 300 && took < 3000, `once its 400 ms hold lapsed (${took.toFixed(0)} ms)`)
    t.same(await state(key), { key, limit: 3, permitsInUse: 3, holders: 2, waiters: 0 })
  })

  t.test('/semaphores/x, /locks/x and /rwlocks/x are three things', async (t) => {
    const key = fresh()
    t.equal((await call('POST', `/semaphores/${key}?limit=1`, tok('s'))).status, 201)
    t.equal((await call('POST', `/locks/${key}`, tok('l'))).status, 201, '/locks/x is another lock')
    t.equal((await call('POST', `/rwlocks/${key}/write`, tok('w'))).status, 201, '/rwlocks/x too')
    t.equal((await call('GET', `/semaphores/${key}`)).body.holders, 1)
    const keys = lockKeys(config.keyPrefix, 'sem', key)
    t.ok(keys.holds.startsWith(`${config.keyPrefix}sem:{${key}}`), 'its own Redis namespace')
  })

  t.test('admin: force-release one hold by fence; listing shows each hold, never a token', async (t) => {
    const key = fresh()
    const a = permitGrantSchema.parse((await call('POST', `/semaphores/${key}?limit=3&permits=2&ttl=60s`, tok('a'))).body)
    const b = permitGrantSchema.parse((await call('POST', `/semaphores/${key}?limit=3&ttl=60s`, tok('b'))).body)
    const waiting = call('POST', `/semaphores/${key}?limit=3&permits=2&wait=10s`, tok('c'))
    await until(async () => (await state(key))?.waiters === 1, 'c in line')

    const inspected = await state(key, '?holds=true')
    t.same(
      inspected?.holds?.map((h) => [h.fence, h.permits, h.holdCount]),
      [
        [a.fence, 2, 1],
        [b.fence, 1, 1],
      ],
      '?holds=true: each hold by fence, with its permits',
    )
    t.ok(
      inspected?.holds?.every((h) => h.remainingMs > 50_000),
      'and its remaining time',
    )
    const list = await call('GET', `/semaphores?prefix=${key}`)
    const page = semaphoreListSchema.parse(list.body)
    t.same(
      page.items.map((i) => [i.key, i.limit, i.permitsInUse, i.holders, i.waiters, i.holds?.length]),
      [[key, 3, 3, 2, 1, 2]],
      'the listing: one semaphore, with its holds',
    )
    for (const name of ['a', 'b', 'c']) t.notMatch(JSON.stringify(list.body), tok(name), 'no token in the listing')

    t.equal((await call('DELETE', `/semaphores/${key}?force=true`)).status, 400, 'force without a fence: 400')
    const forced = await call('DELETE', `/semaphores/${key}?force=true&fence=${a.fence}`)
    t.same([forced.status, forced.body], [200, { key, released: true, holdCount: 0 }], 'a’s hold dropped')
    t.same([(await waiting).status, (await waiting).body.permits], [201, 2], 'the waiter was handed the 2 permits at once')
    t.equal((await call('PUT', `/semaphores/${key}/renew`, tok('a'))).body.error, 'not_owner', 'a has lost its hold')
    t.equal((await call('PUT', `/semaphores/${key}/renew`, tok('b'))).status, 200, 'b still holds')
    t.equal((await call('DELETE', `/semaphores/${key}?force=true&fence=${a.fence}`)).status, 404, 'that fence is gone: 404')
    t.match(
      logText(),
      new RegExp(`"action":"force-release","key":"${key}","mode":"permit","fence":${a.fence}`),
      'the admin action is logged',
    )
  })

  t.test('the Redis keys live as long as the longest hold, and the count and limit go with them', async (t) => {
    const key = fresh()
    await call('POST', `/semaphores/${key}?limit=3&ttl=300`, tok('a'))
    await call('POST', `/semaphores/${key}?limit=3&permits=2&ttl=800`, tok('b'))
    const keys = lockKeys(config.keyPrefix, 'sem', key)
    const client = nodes[0]!.client()
    t.teardown(() => client.quit())
    const pttl = await client.pttl(keys.holds)
    t.ok(pttl > 600 && pttl <= 800, `holds key TTL ${pttl} covers the longest hold (800) and no more`)
    t.same(await client.hmget(keys.holds, 'n', 'u'), ['3', '3'], 'limit and permits in use beside the holds')
    await sleep(900)
    t.same(await client.exists(keys.holds, keys.readers), 0, 'all gone after the last hold lapsed')
    t.equal((await call('POST', `/semaphores/${key}?limit=7`, tok('c'))).status, 201, 'and a new limit may be set')
  })
}
