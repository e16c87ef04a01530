/**
 * The watchdog's rules that the conformance scenarios cannot see from outside, against the real
 * service of the conformance environment: renewal jitter bounds, the acquire's retry budget,
 * Retry-After honoured, the re-anchoring renew after a wait, a 404 on renew ending the renewals, and
 * what a caller blocking the event loop gets.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Client, jitter, LockHeldError, retryDelay, TooManyWaitersError, UnreachableError } from '../src/index.js'
import { recordingFetch, runId, startEnvironment, type Recorded } from './environment.js'

const { env, stop } = await startEnvironment()
t.teardown(stop)
const admin = (extra = {}): Client => new Client({ url: env.service, apiKey: env.adminKey, ...extra })
const key = (name: string): string => `${runId}:watchdog:${name}`
const renews = (calls: Recorded[]) => calls.filter((c) => c.method === 'PUT' && c.path.endsWith('/renew'))
const busy = (ms: number): void => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // the event loop is blocked: no timer runs
  }
}

t.test('jitter: ttl/3 ± 10 %, at both ends of the random source, and renewals spaced so', async (t) => {
  t.equal(
    jitter(300, 0.1, () => 0),
    270,
  )
  t.equal(
    jitter(300, 0.1, () => 1),
    330,
  )
  for (let i = 0; i < 1000; i++) {
    const d = jitter(300, 0.1)
    if (d < 270 || d > 330) t.fail(`out of bounds: ${d}`)
  }
  for (const [random, low, high] of [
    [() => 0, 180, 180],
    [() => 0.999, 219, 220],
  ] as const) {
    const { fetch, calls } = recordingFetch()
    const hold = await admin({ fetch }).lock(key(`jitter-${low}`), { ttlMs: 600, random, watch: false })
    await sleep(1000)
    await hold.release()
    const sent = renews(calls)
    t.ok(sent.length >= 3, `${sent.length} renewals in 1 s`)
    for (let i = 1; i < sent.length; i++) {
      const [previous, next] = [sent[i - 1]!, sent[i]!]
      const gap = next.at - previous.at
      const roundTrip = (previous.answeredAt ?? previous.at) - previous.at
      // A timer never fires early; it may fire late on a loaded machine, and the renew's own round trip
      // adds to the gap. A slow renew (much of the window spent) brings the next one forward by design,
      // and so does a failed one (a busy machine's 503 or timeout: retried after a short backoff).
      if (roundTrip < 50 && previous.status === 200) t.ok(gap >= low - 2, `gap ${gap.toFixed(0)} ms ≥ ${low} ms`)
      else {
        const outcome = previous.status === 200 ? `took ${roundTrip.toFixed(0)} ms` : `failed (${previous.status ?? previous.error})`
        t.comment(`a renew ${outcome}: the next one came ${gap.toFixed(0)} ms after it`)
      }
      t.ok(gap <= high + roundTrip + 150, `gap ${gap.toFixed(0)} ms ≤ ${high} ms + its round trip + a late timer`)
    }
  }
})

t.test('retry budget: transport failures retried with backoff until waitMs + retryBudgetMs, then the failure', async (t) => {
  const { fetch, calls } = recordingFetch()
  const closed = new Client({ url: 'http://127.0.0.1:1', fetch })
  const started = performance.now()
  const err = await closed.locks.acquire('k', { retryBudgetMs: 600 }).catch((e: unknown) => e)
  const took = performance.now() - started
  t.type(err, UnreachableError)
  t.ok(calls.length >= 3, `${calls.length} attempts`)
  t.ok(took <= 600 + 200, `gave up after ${took.toFixed(0)} ms (budget 600 ms)`)
  const once = recordingFetch()
  await new Client({ url: 'http://127.0.0.1:1', fetch: once.fetch }).locks.acquire('k', { retryBudgetMs: 0 }).catch(() => undefined)
  t.equal(once.calls.length, 1, 'retryBudgetMs 0: one attempt')
  for (let attempt = 0; attempt < 8; attempt++) {
    const d = retryDelay(attempt)
    t.ok(d >= 0 && d <= 1000, `backoff ${attempt}: ${d.toFixed(0)} ms ≤ 1 s`)
  }
})

t.test('Retry-After honoured: a 429 too_many_waiters is retried no sooner than it says, with the remaining wait', async (t) => {
  const k = key('retry-after')
  const c = admin()
  const holder = await c.locks.acquire(k, { ttlMs: 10_000 })
  const parked = new AbortController()
  const waiters = Array.from({ length: env.maxWaiters }, () =>
    c.locks.acquire(k, { waitMs: 10_000, signal: parked.signal }).catch((e: unknown) => e),
  )
  await sleep(300)
  const { fetch, calls } = recordingFetch()
  const bodies: unknown[] = []
  const recording: typeof globalThis.fetch = async (input, init) => {
    bodies.push(JSON.parse(String(init?.body)))
    return fetch(input, init)
  }
  const extra = admin({ fetch: recording })
  // The line empties after 500 ms, so the retry is let in (and times out in line: a 409 after its wait).
  setTimeout(() => parked.abort(), 500)
  const err = await extra.locks.acquire(k, { waitMs: 2500 }).catch((e: unknown) => e)
  await Promise.all(waiters)
  t.ok(calls.length >= 2, `${calls.length} attempts`)
  t.equal(calls[0]?.status, 429, 'the first was refused: too many waiters')
  const gap = (calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)
  t.ok(gap >= 1000 && gap <= 1200 + 300, `retried ${gap.toFixed(0)} ms later (Retry-After: 1 s, + up to 20 % jitter)`)
  const [first, second] = bodies as { waitMs: number; token: string }[]
  t.ok(
    second && first && second.waitMs < first.waitMs - 900,
    `the retry sends the remaining wait (${first?.waitMs} → ${second?.waitMs} ms)`,
  )
  t.equal(second?.token, first?.token, 'the same token')
  t.notOk(err instanceof TooManyWaitersError, 'not the 429: the retry was let in')
  t.type(err, LockHeldError, 'and waited out the rest of its wait: 409')
  await c.locks.release(k, holder.token)
})

t.test('re-anchor after a wait: the hold is renewed before lock() returns, and the deadline counts from that renew', async (t) => {
  const k = key('reanchor')
  const c = admin()
  const holder = await c.locks.acquire(k, { ttlMs: 5000 })
  setTimeout(() => void c.locks.release(k, holder.token), 700)
  const { fetch, calls } = recordingFetch()
  const hold = await admin({ fetch }).lock(k, { ttlMs: 1000, waitMs: 3000, watch: false })
  const returned = performance.now()
  const [renew] = renews(calls)
  t.ok(renew && renew.at < returned, 'a renew before lock() returned')
  t.ok(renew && hold.deadline > renew.at + 900 && hold.deadline <= renew.at + 1000, 'deadline = renew send + its validityMs')
  t.ok(hold.deadline > calls[0]!.at + 1000, 'later than the acquire-anchored deadline would have been')
  await hold.release()
})

t.test('a renew answering 404 signals not_held, and the watchdog never renews again', async (t) => {
  const k = key('renew-404')
  const { fetch, calls } = recordingFetch()
  const hold = await admin({ fetch }).lock(k, { ttlMs: 600, watch: false })
  await admin().locks.forceRelease(k)
  await sleep(700)
  t.equal(hold.lostReason, 'not_held')
  const count = renews(calls).length
  await sleep(600)
  t.equal(renews(calls).length, count, 'no renew after the 404')
  t.equal(await hold.release(), undefined, 'nothing to release, no error')
})

t.test('a caller that blocks the event loop past the validity: the hold reads as lost the moment it looks', async (t) => {
  const k = key('starved')
  const c = admin()
  const hold = await c.lock(k, { ttlMs: 600 })
  const signal = hold.signal
  busy(700)
  // No timer has run: the signal read before the block cannot know; reading it again checks the deadline.
  t.notOk(signal.aborted, 'a signal read before the block has not fired yet (no timer ran)')
  t.ok(hold.signal.aborted, 'hold.signal checks the deadline first')
  t.equal(hold.lostReason, 'validity_exhausted')
  t.throws(() => hold.check(), { name: 'LockLostError' })
  await hold.release()
})

t.test('a caller that blocks for most of its validity: renewed at once when the loop is free', async (t) => {
  const k = key('starved-short')
  const c = admin()
  const { fetch, calls } = recordingFetch()
  const hold = await admin({ fetch }).lock(k, { ttlMs: 1500 })
  busy(1200)
  const freed = performance.now()
  await sleep(50)
  const [renew] = renews(calls)
  t.ok(
    renew && renew.at - freed < 30,
    `the overdue renew went out ${renew ? (renew.at - freed).toFixed(1) : '-'} ms after the loop was free`,
  )
  t.notOk(hold.signal.aborted, 'still held')
  t.equal((await c.locks.inspect(k)).fence, hold.fence)
  await hold.release()
})

t.test("sessions.open sends lockDelayMs (the service answers the session's delay); a negative one is refused first", async (t) => {
  const c = admin()
  const session = await c.sessions.open({ ttlMs: 5000, lockDelayMs: 1500 })
  t.equal(session.lockDelayMs, 1500)
  await c.sessions.close(session.id)
  await t.rejects(c.sessions.open({ lockDelayMs: -1 }), { name: 'InvalidArgumentError', argument: 'lockDelayMs' })
})
