import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { grantSchema, releaseResultSchema } from '../../src/http/schemas/holds.js'
import { lockStateSchema } from '../../src/http/schemas/locks.js'
import type { Config } from '../../src/config.js'
import { startApp } from '../../harness/app.js'

/**
 * The behaviour of /locks/:key as the README and openapi.yaml describe it, runnable against any backend: one Redis, or a
 * quorum of N, a Redis Cluster, a Sentinel-managed primary (`overrides`: redisMode and the like). Every reply is also checked against the zod schema the OpenAPI document comes from.
 */
export async function exclusiveSuite(t: Test, redisUrls: readonly string[], overrides: Partial<Config> = {}): Promise<void> {
  const { app, config } = await startApp(t, redisUrls, overrides)
  const call = async (method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, options: { token?: string; body?: object } = {}) => {
    const res = await app.inject({
      method,
      url,
      headers: options.token ? { 'lock-token': options.token } : {},
      ...(options.body ? { payload: options.body } : {}),
    })
    const body = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(body)
    return { status: res.statusCode, body, headers: res.headers }
  }
  const token = (name: string) => `${name}-token-0123456789abcdef`.slice(0, 32)
  let n = 0
  const fresh = () => `k${++n}-${Date.now()}`

  t.test('grant: 201 with the full grant shape and a server-made token', async (t) => {
    const key = fresh()
    const before = Date.now()
    const res = await call('POST', `/locks/${key}`)
    t.equal(res.status, 201)
    const g = grantSchema.parse(res.body)
    t.equal(g.key, key)
    t.equal(g.mode, 'exclusive')
    t.match(g.token, /^[A-Za-z0-9_-]{22}$/, '128-bit random token, base64url')
    t.ok(Number.isSafeInteger(g.fence) && g.fence > 0, 'fence is a positive safe integer')
    t.equal(g.ttlMs, config.defaultTtlMs, 'default TTL')
    t.ok(g.validityMs <= g.ttlMs - (g.ttlMs * config.driftFactor + 2), 'validity leaves room for drift')
    t.ok(g.validityMs > g.ttlMs / 2, 'validity is most of the TTL')
    const expires = Date.parse(g.expiresAt)
    t.ok(expires >= before + g.ttlMs - 5 && expires <= Date.now() + g.ttlMs, 'expiresAt = grant time + ttlMs')
    t.equal(g.holdCount, 1)
  })

  t.test('query ttl and JSON ttlMs', async (t) => {
    const a = await call('POST', `/locks/${fresh()}?ttl=1.5s`)
    t.equal(a.body.ttlMs, 1500)
    const b = await call('POST', `/locks/${fresh()}`, { body: { ttlMs: 2500 } })
    t.equal(b.body.ttlMs, 2500)
    const c = await call('POST', `/locks/${fresh()}?ttl=2500`, { body: { ttlMs: 2500 } })
    t.equal(c.status, 201, 'the same value given both ways is fine')
  })

  t.test('held by someone else: 409 lock_held with retryAfterMs and Retry-After', async (t) => {
    const key = fresh()
    await call('POST', `/locks/${key}?ttl=2500`, { token: token('a') })
    const res = await call('POST', `/locks/${key}`, { token: token('b') })
    t.equal(res.status, 409)
    t.equal(res.body.error, 'lock_held')
    const retry = res.body.retryAfterMs as number
    t.ok(retry > 0 && retry <= 2500, `retryAfterMs ${retry} within the holder's TTL`)
    t.equal(res.headers['retry-after'], String(Math.max(1, Math.ceil(retry / 1000))))
    t.notOk(JSON.stringify(res.body).includes(token('a')), 'the holder token is not disclosed')
  })

  t.test('idempotent re-acquire: 200, same fence, TTL reset, count unchanged', async (t) => {
    const key = fresh()
    const first = await call('POST', `/locks/${key}?ttl=1000`, { token: token('a') })
    const again = await call('POST', `/locks/${key}?ttl=20000`, { body: { token: token('a') } })
    t.equal(again.status, 200)
    t.equal(again.body.fence, first.body.fence, 'fence kept')
    t.equal(again.body.holdCount, 1)
    t.equal(again.body.ttlMs, 20000)
    const state = lockStateSchema.parse((await call('GET', `/locks/${key}`)).body)
    t.ok(state.remainingMs > 10000, `TTL reset to the new ttlMs (remaining ${state.remainingMs})`)
  })

  t.test('reentrant holds count up and release counts down', async (t) => {
    const key = fresh()
    const a = token('r')
    await call('POST', `/locks/${key}`, { token: a })
    const second = await call('POST', `/locks/${key}`, { token: a, body: { reentrant: true } })
    t.equal(second.status, 200)
    t.equal(second.body.holdCount, 2)
    const third = await call('POST', `/locks/${key}`, { body: { token: a, reentrant: true } })
    t.equal(third.body.holdCount, 3)
    const idem = await call('POST', `/locks/${key}`, { token: a })
    t.equal(idem.body.holdCount, 3, 'a non-reentrant re-acquire changes no count')
    t.equal((await call('GET', `/locks/${key}`)).body.holdCount, 3)
    for (const left of [2, 1]) {
      const r = releaseResultSchema.parse((await call('DELETE', `/locks/${key}`, { token: a })).body)
      t.same(r, { key, released: false, holdCount: left })
      t.equal((await call('POST', `/locks/${key}`, { token: token('x') })).status, 409, 'still held for others')
    }
    const last = await call('DELETE', `/locks/${key}`, { token: a })
    t.same(last.body, { key, released: true, holdCount: 0 })
    t.equal((await call('GET', `/locks/${key}`)).status, 404)
  })

  t.test('release: owner only; token by header, body or query; then 404', async (t) => {
    for (const how of ['header', 'body', 'query'] as const) {
      const key = fresh()
      const a = token(how)
      await call('POST', `/locks/${key}`, { token: a })
      const wrong = await call('DELETE', `/locks/${key}`, { token: token('z') })
      t.equal(wrong.status, 409, `${how}: wrong token`)
      t.equal(wrong.body.error, 'not_owner')
      t.equal((await call('GET', `/locks/${key}`)).status, 200, 'still held after a wrong release')
      const res =
        how === 'header'
          ? await call('DELETE', `/locks/${key}`, { token: a })
          : how === 'body'
            ? await call('DELETE', `/locks/${key}`, { body: { token: a } })
            : await call('DELETE', `/locks/${key}?token=${a}`)
      t.equal(res.status, 200, `${how}: released`)
      t.same(res.body, { key, released: true, holdCount: 0 })
      const again = await call('DELETE', `/locks/${key}`, { token: a })
      t.equal(again.status, 404)
      t.equal(again.body.error, 'lock_not_found')
    }
  })

  t.test('renew: default TTL is the latest grant or renew; owner only; 404 when gone', async (t) => {
    const key = fresh()
    const a = token('n')
    const g = await call('POST', `/locks/${key}?ttl=5000`, { token: a })
    const r1 = await call('PUT', `/locks/${key}/renew`, { token: a })
    t.equal(r1.status, 200)
    grantSchema.parse(r1.body)
    t.equal(r1.body.ttlMs, 5000)
    t.equal(r1.body.fence, g.body.fence, 'renew keeps the fence')
    const r2 = await call('PUT', `/locks/${key}/renew`, { body: { token: a, ttlMs: 8000 } })
    t.equal(r2.body.ttlMs, 8000)
    const r3 = await call('PUT', `/locks/${key}/renew?ttl=8s`, { token: a })
    t.equal(r3.body.ttlMs, 8000)
    const r4 = await call('PUT', `/locks/${key}/renew`, { token: a })
    t.equal(r4.body.ttlMs, 8000, 'default follows the latest renew')
    const state = (await call('GET', `/locks/${key}`)).body
    t.ok((state.remainingMs as number) > 5000, 'the TTL really was extended')
    const wrong = await call('PUT', `/locks/${key}/renew`, { token: token('q') })
    t.equal(wrong.status, 409)
    t.equal(wrong.body.error, 'not_owner')
    const missing = await call('PUT', `/locks/${key}/renew`)
    t.equal(missing.status, 400, 'a token is required')
    await call('DELETE', `/locks/${key}`, { token: a })
    const gone = await call('PUT', `/locks/${key}/renew`, { token: a })
    t.equal(gone.status, 404)
    t.equal(gone.body.error, 'lock_not_found')
  })

  t.test('inspect: state without the token; 404 when free', async (t) => {
    const key = fresh()
    const a = token('i')
    t.equal((await call('GET', `/locks/${key}`)).status, 404)
    const g = await call('POST', `/locks/${key}?ttl=4000`, { token: a })
    const res = await call('GET', `/locks/${key}`)
    t.equal(res.status, 200)
    const s = lockStateSchema.parse(res.body)
    t.same({ ...s, remainingMs: 0 }, { key, mode: 'exclusive', fence: g.body.fence, remainingMs: 0, holdCount: 1, waiters: 0 })
    t.ok(s.remainingMs > 3000 && s.remainingMs <= 4000, `remainingMs ${s.remainingMs}`)
    t.notOk(JSON.stringify(res.body).includes(a), 'no token in the body')
  })

  t.test('expiry: a lapsed hold frees the lock; the old owner gets 404, or 409 once someone else holds it', async (t) => {
    const key = fresh()
    const a = token('e1')
    const first = await call('POST', `/locks/${key}?ttl=150`, { token: a })
    t.equal(first.status, 201)
    await sleep(260)
    t.equal((await call('GET', `/locks/${key}`)).status, 404, 'expired')
    t.equal((await call('PUT', `/locks/${key}/renew`, { token: a })).status, 404)
    const second = await call('POST', `/locks/${key}`, { token: token('e2') })
    t.equal(second.status, 201)
    t.ok((second.body.fence as number) > (first.body.fence as number), 'fence increased across the expiry')
    t.equal((await call('DELETE', `/locks/${key}`, { token: a })).body.error, 'not_owner')
  })

  t.test('fences strictly increase across releases and expiries; keys are independent', async (t) => {
    const key = fresh()
    const other = fresh()
    const held = await call('POST', `/locks/${other}?ttl=20000`, { token: token('other') })
    let last = 0
    for (let i = 0; i < 20; i++) {
      const tok = token(`f${i}`)
      const g = await call('POST', `/locks/${key}?ttl=${i % 2 ? 100 : 5000}`, { token: tok })
      t.equal(g.status, 201)
      t.ok((g.body.fence as number) > last, `grant ${i}: ${g.body.fence} > ${last}`)
      last = g.body.fence as number
      if (i % 2) await sleep(130)
      else await call('DELETE', `/locks/${key}`, { token: tok })
    }
    const otherState = await call('GET', `/locks/${other}`)
    t.same([otherState.status, otherState.body.fence], [200, held.body.fence], 'another key is not affected')
  })

  t.test('caller-chosen token; conflicting token or ttl given twice is 400 and grants nothing', async (t) => {
    const key = fresh()
    const mine = token('mine')
    const g = await call('POST', `/locks/${key}`, { body: { token: mine } })
    t.equal(g.body.token, mine)
    const key2 = fresh()
    const both = await call('POST', `/locks/${key2}`, { token: token('h1'), body: { token: token('h2') } })
    t.equal(both.status, 400)
    const ttl = await call('POST', `/locks/${key2}?ttl=1s`, { body: { ttlMs: 2000 } })
    t.equal(ttl.status, 400)
    t.equal((await call('GET', `/locks/${key2}`)).status, 404, 'nothing was granted')
  })
}
