/**
 * The conformance scenarios (clients/conformance/scenarios.json), one test each, named by its id,
 * against the real service and redis-servers of the conformance environment. A scenario id without a
 * test here fails the meta-test.
 */
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import {
  Client,
  ForbiddenError,
  InvalidArgumentError,
  LimitMismatchError,
  LockDelayedError,
  LockHeldError,
  LockLostError,
  LockNotFoundError,
  LockServiceError,
  NotOwnerError,
  SessionNotFoundError,
  TooManyWaitersError,
  UnauthorizedError,
  UnreachableError,
} from '../src/index.js'
import { abortedWithin, control, recordingFetch, runId, startEnvironment, type Environment } from './environment.js'

type Scenario = (t: Test, env: Environment, key: (name: string) => string) => Promise<void>

const { scenarios: listed } = JSON.parse(readFileSync(new URL('../../conformance/scenarios.json', import.meta.url), 'utf8')) as {
  scenarios: { id: string; title: string }[]
}

const admin = (env: Environment, url = env.service, extra = {}): Client => new Client({ url, apiKey: env.adminKey, ...extra })

/** Rejects with the typed error: returns it. */
async function refused<E extends Error>(t: Test, promise: Promise<unknown>, type: new (...args: never[]) => E, what: string): Promise<E> {
  try {
    await promise
  } catch (err) {
    t.type(err, type, `${what}: ${type.name}`)
    return err as E
  }
  t.fail(`${what}: succeeded, expected ${type.name}`)
  throw new Error(`${what} succeeded`)
}

const scenarios: Record<string, Scenario> = {
  async acquire_release(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const grant = await c.locks.acquire(k, { ttlMs: 5000 })
    t.type(grant.token, 'string', 'a token')
    t.ok(Number.isSafeInteger(grant.fence) && grant.fence > 0, 'a positive integer fence')
    t.ok(grant.validityMs > 0 && grant.validityMs <= 5000, `validityMs ${grant.validityMs} in (0, 5000]`)
    t.ok(grant.expiresAt instanceof Date && !Number.isNaN(grant.expiresAt.getTime()), 'expiresAt is a time')
    t.equal(grant.ttlMs, 5000)
    t.equal((await c.locks.inspect(k)).fence, grant.fence, 'inspect shows the fence')
    t.match(await c.locks.release(k, grant.token), { released: true, holdCount: 0 })
    await refused(t, c.locks.inspect(k), LockNotFoundError, 'inspect after release')
  },

  async contention_owners(t, env, key) {
    const k = key('k')
    await admin(env).locks.acquire(k, { ttlMs: 5000, owner: 'worker-a' })
    const { fetch, calls } = recordingFetch()
    const started = performance.now()
    const err = await refused(t, admin(env, env.service, { fetch }).locks.acquire(k), LockHeldError, 'B')
    t.ok((err.retryAfterMs ?? 0) > 0, `retryAfterMs ${err.retryAfterMs} > 0`)
    t.ok(err.owners.includes('worker-a'), 'owners has worker-a')
    t.equal(calls.length, 1, 'not retried: one request')
    t.ok(performance.now() - started < 1000, 'within 1 s')
  },

  async waiting_handoff(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const a = await c.locks.acquire(k, { ttlMs: 10_000 })
    let granted = 0
    const waiting = c.locks.acquire(k, { ttlMs: 10_000, waitMs: 5000 }).then((g) => ((granted = performance.now()), g))
    await sleep(300)
    await c.locks.release(k, a.token)
    const released = performance.now()
    const b = await waiting
    t.ok(granted - released < 1000, `granted ${Math.round(granted - released)} ms after the release`)
    t.ok(b.fence > a.fence, 'a greater fence')
    t.equal((await c.locks.inspect(k)).fence, b.fence, "inspect shows B's fence")
  },

  async renew_keeps_fence(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const grant = await c.locks.acquire(k, { ttlMs: 1000 })
    await sleep(600)
    const renewed = await c.locks.renew(k, grant.token, { ttlMs: 2000 })
    t.equal(renewed.fence, grant.fence, 'same fence')
    t.ok(renewed.validityMs > 1000 && renewed.validityMs <= 2000, `validityMs ${renewed.validityMs} in (1000, 2000]`)
    await sleep(600)
    t.equal((await c.locks.inspect(k)).fence, grant.fence, 'still held, same fence')
  },

  async watchdog_keeps_hold(t, env, key) {
    const c = admin(env)
    const k = key('k')
    let fence = 0
    await c.withLock(k, { ttlMs: 1000 }, async (hold) => {
      await sleep(3500)
      fence = (await c.locks.inspect(k)).fence
      t.equal(fence, hold.fence, "inspect shows the block's fence")
      t.notOk(hold.signal.aborted, 'the loss signal never fired')
    })
    await refused(t, c.locks.inspect(k), LockNotFoundError, 'free after the helper')
  },

  async starved_caller(t, env, key) {
    const c = admin(env)
    const k = key('k')
    await c.withLock(k, { ttlMs: 1500 }, async (hold) => {
      const busyUntil = performance.now() + 1200
      while (performance.now() < busyUntil) {
        // no await: the event loop (and with it every timer) is blocked
      }
      const inspected = await c.locks.inspect(k)
      const lost = hold.signal.aborted
      t.ok(lost || (inspected.fence === hold.fence && performance.now() < hold.deadline), 'held with its fence and valid, or lost')
      t.notOk(!lost && performance.now() >= hold.deadline, 'never a held-looking hold whose validity has passed')
      t.comment(
        `starved 1.2 s of a 1.5 s TTL: ${lost ? `lost (${hold.lostReason})` : `still held, ${Math.round(hold.remainingMs)} ms of validity left`}`,
      )
    })
  },

  async force_release_signal(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const releaseErrors: Error[] = []
    await c.withLock(k, { ttlMs: 10_000, onReleaseError: (e) => releaseErrors.push(e) }, async (hold) => {
      await sleep(300)
      await c.locks.forceRelease(k)
      const answered = performance.now()
      const at = await abortedWithin(hold.signal, 2000)
      t.ok(at !== undefined, 'the loss signal fired')
      const latency = (at ?? Infinity) - answered
      t.ok(latency <= 200, `within 200 ms of the force-release's answer (${latency.toFixed(1)} ms)`)
      t.comment(`force-release → loss signal: ${latency.toFixed(1)} ms`)
      t.equal(hold.lostReason, 'force_released')
      t.type(hold.signal.reason, LockLostError)
    })
    t.same(releaseErrors, [], 'no release error on exit')
  },

  async redis_killed_signal(t, env, key) {
    const { service } = (await control(env, '/fault/reset')) as { service: string }
    const c = admin(env, service)
    const k = key('k')
    let deadline = 0
    let margin = 0
    const err = await c
      .withLock(k, { ttlMs: 2000 }, async (hold) => {
        await sleep(300)
        await control(env, '/fault/redis/kill')
        const killed = performance.now()
        const at = await abortedWithin(hold.signal, 5000)
        deadline = hold.deadline
        t.ok(at !== undefined, 'the loss signal fired')
        margin = deadline - (at ?? Infinity)
        t.ok(margin > 0, `before the local validity deadline (${margin.toFixed(0)} ms before it)`)
        t.comment(
          `Redis killed → loss signal after ${((at ?? 0) - killed).toFixed(0)} ms (${hold.lostReason}), ${margin.toFixed(0)} ms before the deadline`,
        )
        hold.check()
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    t.type(err, LockLostError, 'the helper raises the loss, not a transport error')
  },

  async dropped_response_retry(t, env, key) {
    const k = key('k')
    const { fetch, calls } = recordingFetch()
    const proxied = admin(env, env.proxied, { fetch })
    await control(env, '/proxy/drop-next-response')
    const grant = await proxied.locks.acquire(k, { ttlMs: 10_000 })
    t.equal((await admin(env).locks.inspect(k)).fence, grant.fence, 'inspect shows the fence the library returned')
    t.ok(calls.length >= 2 && calls[0]?.error !== undefined, `the first attempt failed (${calls[0]?.error})`)
    t.equal(calls.at(-1)?.status, 200, 'the retry answered 200: a re-acquire of the same token')
  },

  async caller_error_surfaces(t, env, key) {
    class MyError extends Error {}
    const c = admin(env)
    const k = key('k')
    const mine = new MyError('mine')
    const err = await c
      .withLock(k, { ttlMs: 5000 }, () => {
        throw mine
      })
      .catch((e: unknown) => e)
    t.equal(err, mine, "the caller's own error")
    t.equal((err as Error).message, 'mine')
    await refused(t, c.locks.inspect(k), LockNotFoundError, 'free right after')
  },

  async release_bounded(t, env, key) {
    const { service } = (await control(env, '/fault/reset')) as { service: string }
    const c = admin(env, service)
    const releaseErrors: Error[] = []
    let returned = 0
    try {
      const result = await c.withLock(
        key('k'),
        { ttlMs: 5000, releaseTimeoutMs: 300, onReleaseError: (e) => releaseErrors.push(e) },
        async () => {
          await control(env, '/fault/redis/pause')
          returned = performance.now()
          return 'the result'
        },
      )
      const took = performance.now() - returned
      t.ok(took <= 1000, `returned ${took.toFixed(0)} ms after the block (≤ 300 + 700 ms)`)
      t.equal(result, 'the result', "the block's result")
      t.equal(releaseErrors.length, 1, 'the release failure is reported, not raised')
      t.type(releaseErrors[0], LockServiceError)
    } finally {
      await control(env, '/fault/redis/resume')
    }
  },

  async max_hold(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const started = performance.now()
    let lostAt = 0
    await c.withLock(k, { ttlMs: 1000, maxHoldMs: 1500 }, async (hold) => {
      lostAt = (await abortedWithin(hold.signal, 4000)) ?? Infinity
      t.equal(hold.lostReason, 'max_hold', 'the reason says the cap was reached')
    })
    const after = lostAt - started
    t.ok(after >= 1300 && after <= 2600, `signalled ${after.toFixed(0)} ms after the acquire`)
    for (;;) {
      try {
        await c.locks.inspect(k)
      } catch (err) {
        t.type(err, LockNotFoundError)
        break
      }
      if (performance.now() - lostAt > 1100) break
      await sleep(25)
    }
    t.ok(performance.now() - lostAt <= 1100, `free ${(performance.now() - lostAt).toFixed(0)} ms after the signal`)
  },

  async session_two_holds(t, env, key) {
    const c = admin(env)
    const [k1, k2] = [key('k1'), key('k2')]
    const session = await c.sessions.start({ ttlMs: 1000 })
    const lock = await c.locks.acquire(k1, { session })
    const write = await c.rwlocks.write.acquire(k2, { session })
    const watching = c.locks.watch(k1, lock.token, { waitMs: 10_000 })
    await sleep(2500)
    t.equal((await c.locks.inspect(k1)).fence, lock.fence, 'K1 still held after 2.5 s')
    t.equal((await c.rwlocks.inspect(k2)).writer?.fence, write.fence, 'K2 still held after 2.5 s')
    await session.close()
    await refused(t, c.locks.inspect(k1), LockNotFoundError, 'K1 after the close')
    await refused(t, c.rwlocks.inspect(k2), LockNotFoundError, 'K2 after the close')
    t.match(await watching, { held: false, reason: 'session_lost' }, 'the watch on K1 says session_lost')
  },

  async semaphore_weights(t, env, key) {
    const c = admin(env)
    const s = key('s')
    await c.semaphores.acquire(s, { limit: 3, permits: 2, ttlMs: 10_000 })
    await c.semaphores.acquire(s, { limit: 3, permits: 1, ttlMs: 10_000 })
    await refused(t, c.semaphores.acquire(s, { limit: 3, permits: 1 }), LockHeldError, 'the third')
    const mismatch = await refused(t, c.semaphores.acquire(s, { limit: 5, permits: 1 }), LimitMismatchError, 'the fourth')
    t.equal(mismatch.limit, 3, 'carries limit 3')
    t.match(await c.semaphores.inspect(s), { permitsInUse: 3, limit: 3 })
  },

  async rwlock_readers_writer(t, env, key) {
    const c = admin(env)
    const r = key('r')
    const [r1, r2] = [await c.rwlocks.read.acquire(r, { ttlMs: 10_000 }), await c.rwlocks.read.acquire(r, { ttlMs: 10_000 })]
    t.not(r1.token, r2.token, 'two read holds, distinct tokens')
    await refused(t, c.rwlocks.write.acquire(r), LockHeldError, 'the first write')
    await c.rwlocks.read.release(r, r1.token)
    await c.rwlocks.read.release(r, r2.token)
    t.equal((await c.rwlocks.write.acquire(r, { ttlMs: 10_000 })).mode, 'write', 'the second write is granted')
  },

  async watch(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const grant = await c.locks.acquire(k, { ttlMs: 10_000 })
    const polled = await c.locks.watch(k, grant.token, { waitMs: 1000 })
    t.ok(polled.held && polled.remainingMs > 0, 'the long poll answers held with remainingMs > 0')
    const events = c.locks.events(k, grant.token, { waitMs: 10_000 })[Symbol.asyncIterator]()
    t.match((await events.next()).value, { held: true }, 'the stream starts with held')
    await c.locks.release(k, grant.token)
    const released = performance.now()
    const lost = await events.next()
    t.match(lost.value, { held: false, reason: 'released' }, 'a lost event, reason released')
    t.ok(performance.now() - released <= 500, `within 500 ms (${(performance.now() - released).toFixed(0)} ms)`)
  },

  async inspect_and_list(t, env, key) {
    const c = admin(env)
    const prefix = key('P') + ':'
    for (const name of ['a', 'b']) await c.locks.acquire(prefix + name, { ttlMs: 10_000 })
    const listed = async (): Promise<string[]> => {
      const keys: string[] = []
      let cursor: string | undefined
      do {
        const page = await c.locks.list({ prefix, cursor })
        keys.push(...page.items.map((item) => item.key))
        cursor = page.cursor ?? undefined
      } while (cursor)
      return [...new Set(keys)].sort()
    }
    t.same(await listed(), [prefix + 'a', prefix + 'b'], 'the first listing')
    t.match(await c.locks.forceRelease(prefix + 'a'), { released: true }, 'force-release answers success')
    t.same(await listed(), [prefix + 'b'], 'the second listing')
  },

  async typed_errors(t, env, key) {
    const c = admin(env)
    const k = key('k')
    await c.locks.acquire(k, { ttlMs: 10_000 })
    const errors = [
      await refused(t, c.locks.renew(k, 'another-token-0123456789'), NotOwnerError, 'renew with another token'),
      await refused(t, c.locks.release(key('nobody'), 'another-token-0123456789'), LockNotFoundError, 'release of a free key'),
      await refused(t, new Client({ url: env.service }).locks.acquire(key('x')), UnauthorizedError, 'no API key'),
      await refused(
        t,
        new Client({ url: env.service, apiKey: env.scopedKey }).locks.acquire(key('x')),
        ForbiddenError,
        'outside the scope',
      ),
    ]
    const parked = new AbortController()
    const waiters = Array.from({ length: env.maxWaiters }, () =>
      c.locks.acquire(k, { waitMs: 10_000, signal: parked.signal }).catch((e: unknown) => e),
    )
    await sleep(300)
    errors.push(await refused(t, c.locks.acquire(k, { waitMs: 500, retryBudgetMs: 0 }), TooManyWaitersError, 'one waiter too many'))
    parked.abort()
    await Promise.all(waiters)
    errors.push(await refused(t, c.sessions.keepalive('s.AAAAAAAAAAAAAAAAAAAAAA'), SessionNotFoundError, 'an unknown session'))
    for (const err of errors) {
      t.ok(
        err instanceof LockServiceError && err.message.length > 0 && typeof err.requestId === 'string',
        `${err.name}: message and request id`,
      )
    }
  },

  async bad_arguments(t) {
    const { fetch, calls } = recordingFetch()
    const c = new Client({ url: 'http://127.0.0.1:1', fetch })
    const cases: [string, () => Promise<unknown>][] = [
      ['key', () => c.locks.acquire('')],
      ['key', () => c.locks.acquire('a b')],
      ['ttlMs', () => c.locks.acquire('k', { ttlMs: 50 })],
      ['permits', () => c.semaphores.acquire('s', { limit: 3, permits: 0 })],
      ['permits', () => c.semaphores.acquire('s', { limit: 3, permits: 4 })],
      ['token', () => c.locks.acquire('k', { token: 'abc' })],
      ['key', () => c.withLock('a b', {}, () => undefined)],
    ]
    for (const [argument, call] of cases) {
      const err = await refused(t, call(), InvalidArgumentError, argument)
      t.equal(err.argument, argument, `names ${argument}`)
    }
    t.equal(calls.length, 0, 'no request was sent')
  },

  async fence_check(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const grant = await c.locks.acquire(k, { ttlMs: 10_000 })
    t.same(await c.locks.checkFence(k, grant.fence), { current: true, fence: grant.fence, held: true }, 'its own fence is current')
    t.same(
      await c.checkFence('exclusive', k, grant.fence - 1),
      { current: false, fence: grant.fence, held: true },
      'fence − 1: the live one',
    )
    await c.locks.release(k, grant.token)
    t.same(await c.locks.checkFence(k, grant.fence), { current: false, fence: null, held: false }, 'after the release')
    const readOnly = new Client({ url: env.service, apiKey: env.readOnlyKey })
    t.same(await readOnly.locks.checkFence(k, grant.fence), { current: false, fence: null, held: false }, 'the read-only key checks')
    await refused(t, readOnly.locks.acquire(k), ForbiddenError, 'the read-only key acquires')
    const { fetch, calls } = recordingFetch()
    const offline = new Client({ url: 'http://127.0.0.1:1', fetch })
    for (const fence of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
      const err = await refused(t, offline.locks.checkFence(k, fence), InvalidArgumentError, `fence ${fence}`)
      t.equal(err.argument, 'fence')
    }
    t.equal(calls.length, 0, 'no request was sent')
  },

  async lock_delay(t, env, key) {
    const c = admin(env)
    const k = key('k')
    const sent = performance.now()
    await c.locks.acquire(k, { ttlMs: 300, lockDelayMs: 1000 })
    await sleep(400)
    const err = await refused(t, c.locks.acquire(k), LockDelayedError, 'an acquire after the lapse')
    t.ok((err.retryAfterMs ?? 0) > 0, `retryAfterMs ${err.retryAfterMs} > 0`)
    t.type(err.delayedUntil, Date, 'delayedUntil is a time')
    await c.locks.acquire(k, { waitMs: 2000 })
    const grantedAfter = performance.now() - sent
    t.ok(grantedAfter >= 1300 && grantedAfter < 2300, `the waiter was granted ${Math.round(grantedAfter)} ms after the first acquire`)
  },
}

const { env, stop } = await startEnvironment()
t.teardown(stop)

t.test('every scenario of scenarios.json has a test, and every test a scenario', async (t) => {
  t.same(Object.keys(scenarios).sort(), listed.map((s) => s.id).sort())
})

for (const { id, title } of listed) {
  t.test(id, { timeout: 20_000 }, async (t) => {
    t.comment(title)
    const scenario = scenarios[id]
    if (!scenario) return t.fail(`no test for scenario ${id}`)
    await scenario(t, env, (name) => `${runId}:${id}:${name}`)
  })
}

t.test('over HTTPS: the tls option trusts a private CA and presents a client certificate; without them, refused', async (t) => {
  const pem = async (file: string) => readFile(file, 'utf8')
  const [ca, cert, keyPem, otherCa] = await Promise.all([env.tls.caFile, env.tls.certFile, env.tls.keyFile, env.tls.otherCaFile].map(pem))
  const k = `${runId}:tls:k`
  const c = new Client({ url: env.tls.service, apiKey: env.adminKey, tls: { ca, cert, key: keyPem } })
  const grant = await c.locks.acquire(k, { ttlMs: 10_000 })
  t.equal((await c.locks.inspect(k)).fence, grant.fence, 'granted and inspected over HTTPS')
  await c.locks.release(k, grant.token)
  const refusals: [string, object][] = [
    ['a CA that did not sign the service certificate', { ca: otherCa, cert, key: keyPem }],
    ['no client certificate', { ca }],
    ['the system CAs only', {}],
  ]
  for (const [i, [what, tls]] of refusals.entries()) {
    const other = new Client({ url: env.tls.service, apiKey: env.adminKey, tls })
    await refused(t, other.locks.acquire(`${k}:${i}`, { ttlMs: 10_000, retryBudgetMs: 0 }), UnreachableError, what)
  }
  t.equal((await c.locks.list({ prefix: `${k}:` })).items.length, 0, 'nothing was granted to a refused client')
  t.throws(() => new Client({ url: env.tls.service, tls: { ca }, fetch }), InvalidArgumentError, 'tls with a fetch of your own: refused')
})
