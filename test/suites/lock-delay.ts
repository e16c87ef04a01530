import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Config } from '../../src/config.js'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { grantSchema } from '../../src/http/schemas/holds.js'
import { lockStateSchema, rwLockStateSchema } from '../../src/http/schemas/locks.js'
import { permitGrantSchema, semaphoreStateSchema } from '../../src/http/schemas/semaphores.js'
import { startApp, type TestApp } from '../../harness/app.js'

type Method = 'POST' | 'PUT' | 'DELETE' | 'GET'

/** What the suite measured: the latency of a waiter served at a lock-delay's end (ms after it ended). */
export interface LockDelayFigures {
  waiterLatencyMs: number[]
}

/** How far two clocks (the test's and the Redis node's) and one HTTP round trip may put a time off, ms. */
const SLACK_MS = 60

/**
 * Lock-delay (issue #30), runnable against any backend: one Redis, a quorum of N, a Redis Cluster, a
 * Sentinel-managed primary (`overrides`: redisMode and the like). A hold with lockDelayMs that ends
 * without its holder's release keeps what it freed from everyone for that long, counted from the
 * hold's expiry; a release never delays; waiters are served when the delay ends. Every reply is checked
 * against the zod schema the OpenAPI document comes from.
 */
export async function lockDelaySuite(t: Test, redisUrls: readonly string[], overrides: Partial<Config> = {}): Promise<LockDelayFigures> {
  const figures: LockDelayFigures = { waiterLatencyMs: [] }
  let service: TestApp = await startApp(t, redisUrls, { logLevel: 'warn', ...overrides })
  const call = async (method: Method, url: string, token?: string, body?: object) => {
    const res = await service.app.inject({ method, url, headers: token ? { 'lock-token': token } : {}, ...(body ? { payload: body } : {}) })
    const json = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(json)
    return { status: res.statusCode, body: json, headers: res.headers }
  }
  const tok = (name: string) => `${name}-delay-token-0123456789`
  let n = 0
  const fresh = () => `delay${++n}-${Date.now()}`
  /** Acquire that must be granted; returns when its hold expires (Date ms) and the grant. */
  const grant = async (url: string, token: string, body: object) => {
    const res = await call('POST', url, token, body)
    if (res.status !== 201) throw new Error(`expected 201 for ${url}, got ${res.status} ${JSON.stringify(res.body)}`)
    const g = (url.startsWith('/semaphores/') ? permitGrantSchema : grantSchema).parse(res.body)
    return { expiresAt: Date.parse(g.expiresAt), fence: g.fence }
  }
  /** Sleep until `at` (Date ms) plus `extra`. */
  const until = (at: number, extra = 0) => sleep(Math.max(0, at + extra - Date.now()))

  t.test('an exclusive hold that expires: 409 lock_delayed until its expiry + lockDelayMs, then granted', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('a'), { ttlMs: 300, lockDelayMs: 1200 })
    // Noticed late on purpose: the delay still runs from the hold's expiry, not from this look.
    await until(expiresAt, 400)
    const refused = await call('POST', `/locks/${key}`, tok('b'))
    t.equal(refused.status, 409)
    t.equal(refused.body.error, 'lock_delayed')
    const delayedUntil = Date.parse(String(refused.body.delayedUntil))
    t.ok(
      Math.abs(delayedUntil - (expiresAt + 1200)) < SLACK_MS,
      `delayedUntil is the expiry + 1200 ms (off by ${delayedUntil - expiresAt - 1200} ms)`,
    )
    const retryAfterMs = Number(refused.body.retryAfterMs)
    const left = delayedUntil - Date.now()
    t.ok(
      retryAfterMs >= left - SLACK_MS && retryAfterMs <= left + 1000 + SLACK_MS,
      `retryAfterMs ${retryAfterMs} ≈ the ${left} ms left, plus jitter`,
    )
    t.equal(refused.headers['retry-after'], String(Math.max(1, Math.ceil(retryAfterMs / 1000))))
    t.match(String(refused.body.message), /lock-delay/)
    t.comment(`the refusal: 409 Retry-After: ${String(refused.headers['retry-after'])} ${JSON.stringify(refused.body)}`)
    t.notOk(JSON.stringify(refused.body).includes(tok('a')), 'never a token')
    const inspected = await call('GET', `/locks/${key}`)
    t.equal(inspected.status, 404, 'nothing is held')
    t.ok(Math.abs(Date.parse(String(inspected.body.delayedUntil)) - delayedUntil) < SLACK_MS, 'inspect shows delayedUntil')
    await until(delayedUntil, SLACK_MS)
    t.equal((await call('POST', `/locks/${key}`, tok('b'))).status, 201, 'granted once the delay has passed')
  })

  t.test('the holder itself is delayed too; jitter spreads retryAfterMs', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('a'), { ttlMs: 200, lockDelayMs: 3000 })
    await until(expiresAt, 50)
    const hints = new Set<number>()
    for (let i = 0; i < 6; i++) {
      const r = await call('POST', `/locks/${key}`, tok(i % 2 ? 'a' : 'c'))
      t.equal(r.body.error, 'lock_delayed')
      hints.add(Number(r.body.retryAfterMs) - (Date.parse(String(r.body.delayedUntil)) - Date.now()))
    }
    t.ok(hints.size > 1, `retry hints differ: ${[...hints].map(Math.round).join(', ')}`)
  })

  t.test('a waiter in line is served when the delay ends (no polling)', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('a'), { ttlMs: 400, lockDelayMs: 800 })
    // Waits from before the expiry: sleeps past the expiry, meets the delay, sleeps to its end.
    const waiting = call('POST', `/locks/${key}`, tok('w'), { waitMs: 5000, ttlMs: 5000 })
    const { status } = await waiting
    const servedAt = Date.now()
    t.equal(status, 201)
    const latency = servedAt - (expiresAt + 800)
    figures.waiterLatencyMs.push(latency)
    t.ok(latency >= -SLACK_MS, `not served before the delay ended (${latency} ms)`)
    t.ok(latency < 250, `served ${latency} ms after the delay ended`)
  })

  t.test('a waiter that arrives during the delay, and one behind it', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('a'), { ttlMs: 200, lockDelayMs: 900 })
    await until(expiresAt, 100)
    const first = call('POST', `/locks/${key}`, tok('w1'), { waitMs: 5000, ttlMs: 300 })
    await sleep(50)
    const second = call('POST', `/locks/${key}`, tok('w2'), { waitMs: 5000, ttlMs: 5000 })
    const a = await first
    const servedAt = Date.now()
    t.equal(a.status, 201)
    const latency = servedAt - (expiresAt + 900)
    figures.waiterLatencyMs.push(latency)
    t.ok(latency >= -SLACK_MS && latency < 250, `first in line served ${latency} ms after the delay ended`)
    // The first waiter's hold has no delay: the second gets it when it lapses.
    t.equal((await second).status, 201, 'the next in line follows')
  })

  t.test('a release never delays, and a 0 means 0', async (t) => {
    const key = fresh()
    await grant(`/locks/${key}`, tok('a'), { ttlMs: 5000, lockDelayMs: 5000 })
    t.equal((await call('DELETE', `/locks/${key}`, tok('a'))).status, 200)
    t.equal((await call('POST', `/locks/${key}`, tok('b'), { ttlMs: 200, lockDelayMs: 0 })).status, 201, 'granted at once after a release')
    await sleep(260)
    t.equal((await call('POST', `/locks/${key}?lockDelay=0`, tok('c'), { ttlMs: 200 })).status, 201, 'lockDelayMs 0: no delay after expiry')
    await sleep(260)
    t.equal((await call('POST', `/locks/${key}`, tok('d'))).status, 201, 'no lockDelayMs: no delay after expiry')
    // A re-acquire with 0 takes a hold's delay away.
    const other = fresh()
    await grant(`/locks/${other}`, tok('a'), { ttlMs: 200, lockDelayMs: 5000 })
    t.equal((await call('POST', `/locks/${other}`, tok('a'), { ttlMs: 200, lockDelayMs: 0 })).status, 200)
    await sleep(260)
    t.equal((await call('POST', `/locks/${other}`, tok('b'))).status, 201, 'a re-acquire with 0: no delay')
  })

  t.test('a renewal moves the delay with the expiry', async (t) => {
    const key = fresh()
    await grant(`/locks/${key}`, tok('a'), { ttlMs: 300, lockDelayMs: 700 })
    await sleep(150)
    const renewed = await call('PUT', `/locks/${key}/renew`, tok('a'), { ttlMs: 600 })
    t.equal(renewed.status, 200)
    const expiresAt = Date.parse(String(renewed.body.expiresAt))
    await until(expiresAt, 50)
    const refused = await call('POST', `/locks/${key}`, tok('b'))
    t.equal(refused.body.error, 'lock_delayed')
    const off = Date.parse(String(refused.body.delayedUntil)) - (expiresAt + 700)
    t.ok(Math.abs(off) < SLACK_MS, `counted from the renewed expiry (off by ${off} ms)`)
  })

  t.test('force-release: the delay runs from the force-release', async (t) => {
    const key = fresh()
    await grant(`/locks/${key}`, tok('a'), { ttlMs: 10_000, lockDelayMs: 700 })
    const forcedAt = Date.now()
    t.equal((await call('DELETE', `/locks/${key}?force=true`)).status, 200)
    const refused = await call('POST', `/locks/${key}`, tok('b'))
    t.equal(refused.body.error, 'lock_delayed')
    const off = Date.parse(String(refused.body.delayedUntil)) - (forcedAt + 700)
    t.ok(off > -SLACK_MS && off < SLACK_MS * 2, `until the force-release + 700 ms (off by ${off} ms)`)
  })

  t.test('read-write: a read hold delays writers only; a write hold delays everyone', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/rwlocks/${key}/read`, tok('r'), { ttlMs: 200, lockDelayMs: 800 })
    await until(expiresAt, 50)
    const writer = await call('POST', `/rwlocks/${key}/write`, tok('w'))
    t.equal(writer.body.error, 'lock_delayed', 'a writer waits out the reader that vanished')
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r2'), { ttlMs: 5000 })).status, 201, 'a reader does not')
    const state = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}`)).body)
    t.ok(state.delayedUntil, 'inspect shows delayedUntil beside the live reader')
    t.equal((await call('DELETE', `/rwlocks/${key}/read`, tok('r2'))).status, 200)
    await until(expiresAt + 800, SLACK_MS)
    const w = await grant(`/rwlocks/${key}/write`, tok('w'), { ttlMs: 200, lockDelayMs: 600 })
    await until(w.expiresAt, 50)
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r3'))).body.error, 'lock_delayed', 'a write hold delays readers')
    t.equal((await call('POST', `/rwlocks/${key}/write`, tok('w2'))).body.error, 'lock_delayed', 'and writers')
  })

  t.test('semaphores: the permits a lapsed hold freed stay out of reach; the others do not', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/semaphores/${key}?limit=3`, tok('a'), { ttlMs: 200, permits: 2, lockDelayMs: 800 })
    await until(expiresAt, 50)
    t.equal((await call('POST', `/semaphores/${key}?limit=3`, tok('b'), { ttlMs: 5000 })).status, 201, 'the one free permit is granted')
    const refused = await call('POST', `/semaphores/${key}?limit=3`, tok('c'), { ttlMs: 5000 })
    t.equal(refused.status, 409)
    t.equal(refused.body.error, 'lock_delayed', 'the delayed permits are not')
    const state = semaphoreStateSchema.parse((await call('GET', `/semaphores/${key}`)).body)
    t.ok(state.delayedUntil, 'inspect shows delayedUntil')
    const waited = await call('POST', `/semaphores/${key}?limit=3`, tok('c'), { ttlMs: 5000, waitMs: 3000 })
    const latency = Date.now() - (expiresAt + 800)
    t.equal(waited.status, 201, 'a waiter is served when the delay ends')
    t.ok(latency >= -SLACK_MS && latency < 250, `${latency} ms after the delay ended`)
    figures.waiterLatencyMs.push(latency)
  })

  t.test('sessions: a lapsed session delays its holds; a closed one does not; 0 on the acquire means 0', async (t) => {
    const open = async (body: object) => {
      const res = await call('POST', '/sessions', undefined, body)
      t.equal(res.status, 201)
      return String(res.body.id)
    }
    const lapsing = await open({ ttlMs: 300, lockDelayMs: 900 })
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('s'), { session: lapsing })
    await until(expiresAt, 100)
    const refused = await call('POST', `/locks/${key}`, tok('b'))
    t.equal(refused.body.error, 'lock_delayed', "the session's delay applies to its hold when the session lapses")
    const closing = await open({ ttlMs: 10_000, lockDelayMs: 5000 })
    const other = fresh()
    await grant(`/locks/${other}`, tok('s'), { session: closing })
    t.equal((await call('DELETE', `/sessions/${closing}`)).status, 200)
    t.equal((await call('POST', `/locks/${other}`, tok('b'))).status, 201, 'closing the session is a release: no delay')
    const zero = await open({ ttlMs: 300, lockDelayMs: 5000 })
    const third = fresh()
    const z = await grant(`/locks/${third}`, tok('s'), { session: zero, lockDelayMs: 0 })
    await until(z.expiresAt, 100)
    t.equal((await call('POST', `/locks/${third}`, tok('b'))).status, 201, "the acquire's 0 wins over the session's delay")
  })

  t.test('bad input: 400 invalid_request', async (t) => {
    const key = fresh()
    const max = service.config.maxLockDelayMs
    for (const body of [
      { lockDelayMs: -1 },
      { lockDelayMs: 1.5 },
      { lockDelayMs: max + 1 },
      { lockDelayMs: '5s' },
      { lockDelayMs: null },
    ]) {
      const r = await call('POST', `/locks/${key}`, tok('a'), body)
      t.equal(r.status, 400, JSON.stringify(body))
      t.equal(r.body.error, 'invalid_request')
    }
    for (const query of ['lockDelay=abc', 'lockDelay=-1s', `lockDelay=${max + 1}`, 'lockDelay=1.5ms']) {
      t.equal((await call('POST', `/locks/${key}?${query}`, tok('a'))).status, 400, query)
    }
    const both = await call('POST', `/locks/${key}?lockDelay=1s`, tok('a'), { lockDelayMs: 2000 })
    t.equal(both.status, 400, 'given both ways with different values')
    t.equal((await call('POST', `/locks/${key}?lockDelay=2s`, tok('a'), { lockDelayMs: 2000 })).status, 201, 'both ways, the same value')
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('a'), { lockDelayMs: -5 })).status, 400)
    t.equal((await call('POST', `/semaphores/${key}?limit=2&lockDelay=x`, tok('a'))).status, 400)
    t.equal((await call('POST', '/sessions', undefined, { lockDelayMs: max + 1 })).status, 400, 'a session too')
  })

  t.test('survives a service restart: the delay lives in Redis', async (t) => {
    const key = fresh()
    const { expiresAt } = await grant(`/locks/${key}`, tok('a'), { ttlMs: 200, lockDelayMs: 1500 })
    await service.app.close()
    service = await startApp(t, redisUrls, { logLevel: 'warn', ...overrides })
    await until(expiresAt, 50)
    const refused = await call('POST', `/locks/${key}`, tok('b'))
    t.equal(refused.body.error, 'lock_delayed', 'a new service process still refuses')
    const state = lockStateSchema.safeParse((await call('GET', `/locks/${key}`)).body)
    t.notOk(state.success, 'inspect: not held (404)')
  })

  return figures
}
