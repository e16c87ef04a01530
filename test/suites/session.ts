import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { grantSchema } from '../../src/http/schemas/holds.js'
import { lockStateSchema } from '../../src/http/schemas/locks.js'
import { keepaliveSchema, sessionSchema, sessionStateSchema } from '../../src/http/schemas/sessions.js'
import { startApp } from '../../harness/app.js'
import { contendOnNewApp } from '../helpers/contenders.js'
import type { RedisProcess } from '../../harness/redis-server.js'

/** Sessions (issue #16), runnable against one Redis or a quorum of N. */
export async function sessionSuite(t: Test, nodes: readonly RedisProcess[]): Promise<void> {
  const { app, logText } = await startApp(
    t,
    nodes.map((n) => n.url),
    { maxSessionHolds: 5 },
  )
  const call = async (method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, token?: string, body?: object) => {
    const res = await app.inject({ method, url, headers: token ? { 'lock-token': token } : {}, ...(body ? { payload: body } : {}) })
    const json = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(json)
    return { status: res.statusCode, body: json }
  }
  const open = async (ttlMs: number, owner?: string) => {
    const res = await call('POST', '/sessions', undefined, { ttlMs, ...(owner ? { owner } : {}) })
    if (res.status !== 201) throw new Error(`open: ${res.status} ${JSON.stringify(res.body)}`)
    return sessionSchema.parse(res.body)
  }
  const tok = (name: string) => `${name}-session-token-0123456789`
  let n = 0
  const fresh = () => `sess${++n}-${Date.now()}`
  const held = async (path: string) => (await call('GET', path)).status === 200

  t.test('open: an id that is a secret, the TTL, the expiry; never logged', async (t) => {
    const before = Date.now()
    const s = await open(2000, 'worker-1')
    t.match(s.id, /^s\.[A-Za-z0-9_-]{22}$/, '"s." and 128 random bits')
    t.equal(s.ttlMs, 2000)
    t.ok(Date.parse(s.expiresAt) >= before + 2000 && Date.parse(s.expiresAt) <= Date.now() + 2000, 'expiresAt = now + ttlMs')
    const shown = sessionStateSchema.parse((await call('GET', `/sessions/${s.id}`)).body)
    t.equal(shown.owner, 'worker-1')
    t.same(shown.holds, [])
    t.ok(shown.remainingMs > 0 && shown.remainingMs <= 2000)
    t.equal((await call('PUT', `/sessions/${s.id}/keepalive`)).status, 200)
    t.equal((await call('DELETE', `/sessions/${s.id}`)).status, 200)
    t.notOk(logText().includes(s.id), 'the session id is never in the logs')
    t.notOk(logText().includes(s.id.slice(2)), 'nor any part of it')
  })

  t.test('bound holds of every kind: one keepalive renews them all; GET lists them; they lapse together', async (t) => {
    const s = await open(1000)
    const key = fresh()
    const paths = [`/locks/${key}`, `/rwlocks/${key}/read`, `/semaphores/${key}?limit=2`]
    const grants = []
    for (const [i, p] of paths.entries()) {
      const res = await call('POST', p, tok(`k${i}`), { session: s.id, owner: `kind-${i}` })
      t.equal(res.status, 201, `bound acquire ${p}`)
      grants.push(grantSchema.omit({ mode: true }).parse(res.body))
    }
    t.ok(
      grants.every((g) => (g.ttlMs ?? 0) <= 1000 && (g.ttlMs ?? 0) >= 100),
      "the lease is the session's (what is left of it)",
    )
    const shown = sessionStateSchema.parse((await call('GET', `/sessions/${s.id}`)).body)
    t.same(
      shown.holds.map((h) => [h.key, h.kind, h.fence]),
      [
        [key, 'exclusive', grants[0]?.fence],
        [key, 'permit', grants[2]?.fence],
        [key, 'read', grants[1]?.fence],
      ],
      'GET lists each hold: key, kind, fence (never a token)',
    )
    t.notOk(JSON.stringify(shown).includes(tok('k0')), 'no token')
    // Keepalives every 400 ms for 2.5 s: the 1 s holds outlive their own TTL.
    for (let i = 0; i < 6; i++) {
      await sleep(400)
      const kept = keepaliveSchema.parse((await call('PUT', `/sessions/${s.id}/keepalive`)).body)
      t.equal(kept.holds.length, 3, `keepalive ${i}: still 3 holds`)
    }
    const kept = keepaliveSchema.parse((await call('PUT', `/sessions/${s.id}/keepalive`)).body)
    t.same(kept.lost, [])
    t.ok(kept.holds.every((h) => h.remainingMs === 1000) && kept.ttlMs === 1000, 'each renewed for the session TTL')
    t.ok(kept.validityMs > 0 && kept.validityMs <= 1000)
    t.ok(await held(`/locks/${key}`), 'the lock is held after 2.5 s of a 1 s lease')
    t.equal(lockStateSchema.parse((await call('GET', `/locks/${key}`)).body).owner, 'kind-0', 'owners as for any hold')
    // Keepalives stop: everything lapses together, with the session.
    await sleep(1150)
    const after = await Promise.all([held(`/locks/${key}`), held(`/rwlocks/${key}`), held(`/semaphores/${key}`)])
    t.same(after, [false, false, false], 'every hold lapsed with the session')
    t.equal((await call('PUT', `/sessions/${s.id}/keepalive`)).body.error, 'session_not_found', 'the session lapsed too: 404')
    t.equal((await call('GET', `/sessions/${s.id}`)).status, 404)
  })

  t.test('release works as before and unbinds; keepalive answers the holds it still has', async (t) => {
    const s = await open(5000)
    const [a, b] = [fresh(), fresh()]
    t.equal((await call('POST', `/locks/${a}`, tok('a'), { session: s.id })).status, 201)
    t.equal((await call('POST', `/locks/${b}`, tok('b'), { session: s.id })).status, 201)
    t.equal((await call('DELETE', `/locks/${a}`, tok('a'))).status, 200, 'released with its token')
    const kept = keepaliveSchema.parse((await call('PUT', `/sessions/${s.id}/keepalive`)).body)
    t.same(
      kept.holds.map((h) => h.key),
      [b],
      'only the hold it still has',
    )
    t.same(kept.lost, [{ key: a, kind: 'exclusive' }], 'the released one, once')
    const again = keepaliveSchema.parse((await call('PUT', `/sessions/${s.id}/keepalive`)).body)
    t.same(again.lost, [], 'forgotten after that')
    // Someone else takes the released lock: the session's keepalive never renews it.
    t.equal((await call('POST', `/locks/${a}?ttl=300ms`, tok('other'))).status, 201)
    await call('PUT', `/sessions/${s.id}/keepalive`)
    await sleep(400)
    t.notOk(await held(`/locks/${a}`), "another's hold on the same key was not renewed")
    // A re-acquire by the holder with the session: 200, still one hold of the session.
    t.equal((await call('POST', `/locks/${b}`, tok('b'), { session: s.id })).status, 200)
    t.equal(sessionStateSchema.parse((await call('GET', `/sessions/${s.id}`)).body).holds.length, 1)
    await call('DELETE', `/sessions/${s.id}`)
  })

  t.test('delete releases every hold at once and hands them to their waiters', async (t) => {
    const s = await open(30_000)
    const keys = [fresh(), fresh(), fresh()]
    for (const k of keys) t.equal((await call('POST', `/locks/${k}`, tok('holder'), { session: s.id })).status, 201)
    const waiting = keys.map((k) => call('POST', `/locks/${k}?wait=10s&ttl=5s`, tok('waiter')))
    await sleep(200)
    const started = Date.now()
    const closed = await call('DELETE', `/sessions/${s.id}`)
    t.equal(closed.status, 200)
    t.same(
      closed.body.holds,
      keys.map((key) => ({ key, kind: 'exclusive', released: true })).sort((x, y) => (x.key < y.key ? -1 : 1)),
      'each hold released',
    )
    const granted = await Promise.all(waiting)
    t.same(
      granted.map((g) => g.status),
      [201, 201, 201],
      'every waiter got its lock',
    )
    t.ok(Date.now() - started < 3000, `handed over promptly (${Date.now() - started} ms), not after 30 s`)
    t.equal((await call('DELETE', `/sessions/${s.id}`)).status, 404, 'closed: 404 after that')
    t.equal((await call('PUT', `/sessions/${s.id}/keepalive`)).status, 404)
  })

  t.test('a lapsed session: its holds go to the waiters when it lapses', async (t) => {
    const s = await open(600)
    const key = fresh()
    t.equal((await call('POST', `/locks/${key}`, tok('holder'), { session: s.id })).status, 201)
    const started = Date.now()
    const waiter = await call('POST', `/locks/${key}?wait=5s`, tok('waiter'))
    t.equal(waiter.status, 201, 'the waiter got it')
    const waited = Date.now() - started
    t.ok(waited >= 400 && waited < 2500, `about when the session lapsed (${waited} ms)`)
  })

  t.test('limits and bad input: clear 4xx, nothing changed', async (t) => {
    const s = await open(5000)
    for (let i = 0; i < 5; i++) t.equal((await call('POST', `/locks/${fresh()}`, tok(`l${i}`), { session: s.id })).status, 201)
    const full = await call('POST', `/locks/${fresh()}`, tok('l9'), { session: s.id })
    t.equal(full.status, 429, 'MAX_SESSION_HOLDS')
    t.equal(full.body.error, 'too_many_holds')
    const unknown = 's.AAAAAAAAAAAAAAAAAAAAAA'
    const nf = await call('POST', `/locks/${fresh()}`, tok('x'), { session: unknown })
    t.equal(nf.status, 404)
    t.equal(nf.body.error, 'session_not_found')
    for (const verb of ['PUT', 'GET', 'DELETE'] as const) {
      const res = await call(verb, verb === 'PUT' ? `/sessions/${unknown}/keepalive` : `/sessions/${unknown}`)
      t.equal(res.body.error, 'session_not_found', `${verb} of an unknown session: 404`)
    }
    const key = fresh()
    const asToken = await call('POST', `/locks/${key}`, s.id)
    t.equal(asToken.status, 400, 'a session id as a lock token: 400')
    t.match(asToken.body.message, /session id, not a lock token/)
    const asSession = await call('PUT', `/sessions/${tok('a')}/keepalive`)
    t.equal(asSession.status, 400, 'a lock token as a session id: 400')
    t.match(asSession.body.message, /lock token, not a session id/)
    const ttl = await call('POST', `/locks/${key}`, tok('t'), { session: s.id, ttlMs: 1234 })
    t.equal(ttl.status, 400, "a bound acquire with another TTL than the session's: 400")
    t.match(ttl.body.message, /session's TTL \(5000 ms\)/)
    t.equal(
      (await call('POST', `/locks/${key}`, tok('t'), { session: s.id, ttlMs: 5000 })).status,
      429,
      "the session's own TTL is fine (but it is full)",
    )
    for (const [what, body] of [
      ['ttl too small', { ttlMs: 10 }],
      ['unknown field', { ttl: 1000 }],
      ['owner empty', { owner: '' }],
      ['ttl a string', { ttlMs: '1000' }],
    ] as const) {
      const res = await call('POST', '/sessions', undefined, body)
      t.equal(res.status, 400, what)
    }
    t.equal((await call('POST', `/sessions?ttl=1s`)).status, 400, 'no query parameters')
    t.equal((await call('GET', '/sessions/s.short')).status, 400, 'a malformed id')
    t.equal((await call('POST', `/locks/${key}?session=${s.id}`, tok('q'), { session: unknown })).status, 400, 'query and body disagree')
    t.equal(sessionStateSchema.parse((await call('GET', `/sessions/${s.id}`)).body).holds.length, 5, 'the session still has its 5 holds')
    t.equal((await call('GET', `/locks/${key}`)).status, 404, 'nothing was taken')
    await call('DELETE', `/sessions/${s.id}`)
    t.notOk(logText().includes(s.id.slice(2)), 'the id sent as ?session= and in paths is never logged')
    t.match(logText(), /session=\[redacted\]/, 'the query parameter is redacted')
    t.match(logText(), /\/sessions\/\[redacted\]/, 'so is the path')
  })

  t.test('session-bound holds under contention: the history checker (acquire, release, close)', async (t) => {
    const { stats, history } = await contendOnNewApp(t, nodes.length, {
      keys: ['sess-hot-1', 'sess-hot-2'],
      clients: 8,
      durationMs: 2500,
      ttlMs: 2000,
      sessions: true,
    })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 30, `${stats.grants} bound grants, ${stats.conflicts} conflicts`)
    history.assertSafe(t, `session-bound holds, N = ${nodes.length}`)
  })

  t.test('session-bound holds waiting in line under contention: the history checker', async (t) => {
    const { stats, history } = await contendOnNewApp(t, nodes.length, {
      keys: ['sess-line'],
      clients: 6,
      durationMs: 2500,
      ttlMs: 2000,
      waitMs: 2000,
      sessions: true,
    })
    t.same(stats.unexpected, [])
    t.ok(stats.grants >= 20, `${stats.grants} bound grants through the line`)
    history.assertSafe(t, `session-bound waiters, N = ${nodes.length}`)
  })
}
