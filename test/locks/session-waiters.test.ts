import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { startRedis } from '../../harness/redis-server.js'

// A request bound to a session that waits in line must not outlive its session: when the session lapses
// (no keepalive) or is closed, it leaves the line at once with 404 session_not_found, and is never granted
// afterwards — for every kind of hold (before this, such a waiter stayed in line and got 201 when the hold
// ahead went, holding a lock bound to a session that no longer existed).
t.test('a session-bound waiter whose session goes leaves the line at once and is never granted', async (t) => {
  const redis = await startRedis({ t })
  const { address } = await startListening(t, [redis.url], { logLevel: 'warn' })
  const call = (method: string, path: string, options: { token?: string; body?: object } = {}) =>
    request(address, method, path, { timeoutMs: 20_000, ...options })
  const tok = (name: string) => `${name}-waiter-token-0123456789`
  let n = 0
  const fresh = () => `sw${++n}-${Date.now()}`
  const kinds = [
    { kind: 'lock', acquire: (k: string) => `/locks/${k}`, inspect: (k: string) => `/locks/${k}`, body: {} },
    { kind: 'write hold', acquire: (k: string) => `/rwlocks/${k}/write`, inspect: (k: string) => `/rwlocks/${k}`, body: {} },
    { kind: 'semaphore', acquire: (k: string) => `/semaphores/${k}?limit=1`, inspect: (k: string) => `/semaphores/${k}`, body: {} },
    {
      kind: 'election',
      acquire: (k: string) => `/elections/${k}/campaign`,
      inspect: (k: string) => `/elections/${k}`,
      body: { candidate: 'c' },
    },
  ]

  for (const ending of ['lapses', 'is closed'] as const) {
    for (const { kind, acquire, inspect, body } of kinds) {
      t.test(`${kind}: the session ${ending} while its request waits`, async (t) => {
        const key = fresh()
        const holder = await call('POST', acquire(key), { token: tok('holder'), body: { ...body, ttlMs: 2500 } })
        t.equal(holder.status, 201, 'held by another token')
        const session = await call('POST', '/sessions', { body: { ttlMs: 700 } })
        t.equal(session.status, 201)
        const id = session.body.id as string
        const started = performance.now()
        const waiting = call('POST', acquire(key), { token: tok('waiter'), body: { ...body, session: id, waitMs: 10_000 } })
        if (ending === 'is closed') {
          await sleep(200)
          t.equal((await call('DELETE', `/sessions/${id}`)).status, 200)
        }
        const answer = await waiting
        const tookMs = performance.now() - started
        t.equal(answer.status, 404, `answered ${answer.status}, not a grant`)
        t.match(answer.body, { error: 'session_not_found' })
        t.ok(tookMs < 1800, `at once when the session went (${tookMs.toFixed(0)} ms), not when the hold ahead went (2.5 s)`)
        const state = await call('GET', inspect(key))
        t.equal(kind === 'election' ? state.body.candidates : state.body.waiters, 0, 'it left the line')
        // The hold ahead goes: nobody is handed it (the waiter is gone), so it is free.
        const released = await call('DELETE', kind === 'semaphore' ? `/semaphores/${key}` : acquire(key).replace('/campaign', ''), {
          token: tok('holder'),
        })
        t.equal(released.status, 200)
        await sleep(100)
        t.equal((await call('GET', inspect(key))).status, 404, 'free afterwards: never granted to the gone session')
      })
    }
  }

  t.test('a session kept alive while waiting: granted as before', async (t) => {
    const key = fresh()
    await call('POST', `/locks/${key}`, { token: tok('holder'), body: { ttlMs: 1500 } })
    const session = await call('POST', '/sessions', { body: { ttlMs: 600 } })
    const id = session.body.id as string
    const keeping = setInterval(() => void call('PUT', `/sessions/${id}/keepalive`), 200)
    t.teardown(() => clearInterval(keeping))
    const answer = await call('POST', `/locks/${key}`, { token: tok('waiter'), body: { session: id, waitMs: 10_000 } })
    clearInterval(keeping)
    t.equal(answer.status, 201, 'granted when the hold ahead lapsed')
  })
})
