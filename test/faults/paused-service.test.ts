/**
 * A service replica stopped (SIGSTOP) with a grant in flight, then resumed past the grant's TTL: what
 * the client gets. The answer is never a hold the client would believe valid: a 503 when the pause
 * fell while the service was deciding, or a grant the client can tell arrived after its validity
 * (counted from the client's send time) when the pause came before the service read the request.
 * The rule for a grant decided before a pause and answered after it is src/http/late-grant.ts (the
 * unit tests below).
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { request } from '../../harness/http.js'
import { startRedis } from '../../harness/redis-server.js'
import { startService } from '../../harness/service-process.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import { ServiceError } from '../../src/errors.js'
import { answerable, validityLeft } from '../../src/http/late-grant.js'
import type { Grant } from '../../src/locks/types.js'

const TTL_MS = 400
/** Longer than the TTL: whatever the service had decided before is worth nothing after it. */
const PAUSE_MS = 1_000

t.test('a real replica stopped past the TTL', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  // A node timeout far above the pause: the answer waiting in the socket is read, no timer fires first.
  const service = await startService({ REDIS_URLS: proxy.url, NODE_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn' }, { t })

  t.test('stopped while Redis answers the acquire: 503 validity_expired, nothing held', async (t) => {
    // Redis' answers take 300 ms to come back: time to stop the service after the script ran.
    proxy.setLatency({ down: { ms: 300 } })
    t.teardown(() => proxy.setLatency(undefined))
    const answer = request(service.url, 'POST', `/locks/paused-a?ttl=${TTL_MS}`, { timeoutMs: 10_000 })
    const deadline = performance.now() + 5_000
    while (!Object.keys(await redis.keys()).some((k) => k.includes('{paused-a}')) && performance.now() < deadline) await sleep(5)
    service.pause()
    await sleep(PAUSE_MS)
    service.resume()
    const res = await answer
    t.equal(res.status, 503, JSON.stringify(res.body))
    t.equal(res.body.error, 'backend_unavailable')
    t.equal(res.body.reason, 'validity_expired')
    proxy.setLatency(undefined)
    const fresh = await request(service.url, 'POST', `/locks/paused-a?ttl=${TTL_MS}`)
    t.equal(fresh.status, 201, 'the key is free: the late grant was not kept')
  })

  t.test('stopped before it read the request: a grant the client can tell came after its validity', async (t) => {
    service.pause()
    const sentAt = performance.now()
    const answer = request(service.url, 'POST', `/locks/paused-b?ttl=${TTL_MS}`, { timeoutMs: 10_000 })
    await sleep(PAUSE_MS)
    service.resume()
    const res = await answer
    const receivedAt = performance.now()
    t.equal(res.status, 201)
    const validityMs = res.body.validityMs as number
    t.ok(validityMs > 0 && validityMs <= TTL_MS, `validityMs ${validityMs}`)
    t.ok(receivedAt > sentAt + validityMs, 'received after sent + validityMs: not a hold to act on')
  })
})

t.test('late-grant: the validity left at answer time, or a 503 and a release', async (t) => {
  const grant = (validityMs: number, agoMs: number, regranted = false): Grant => ({
    key: 'k',
    mode: 'exclusive',
    token: 'x'.repeat(16),
    fence: 7,
    ttlMs: 1_000,
    validityMs,
    expiresAt: new Date().toISOString(),
    holdCount: 1,
    regranted,
    decidedAt: performance.now() - agoMs,
  })
  const counted: string[] = []
  const metrics = { grantsAnsweredLate: { inc: (labels: { mode: string }) => void counted.push(labels.mode) } }
  let released = 0
  const release = async () => void released++

  t.equal(validityLeft({ validityMs: 900, decidedAt: 1_000 }, 1_250), 650)
  const kept = answerable(grant(900, 300), { metrics, release })
  t.notOk(kept instanceof ServiceError)
  t.ok(!(kept instanceof ServiceError) && kept.validityMs <= 600 && kept.validityMs > 0, 'the time held is taken off')
  t.equal(released, 0)

  const late = answerable(grant(900, 1_500), { metrics, release })
  t.ok(late instanceof ServiceError)
  t.equal(late instanceof ServiceError && late.code, 'backend_unavailable')
  t.same(late instanceof ServiceError && late.details, { reason: 'validity_expired' })
  t.equal(released, 1, 'a new hold answered too late is released')
  t.same(counted, ['exclusive'])

  t.ok(answerable(grant(900, 1_500, true), { metrics, release }) instanceof ServiceError)
  t.equal(released, 1, "a re-grant's hold was the caller's before: not released")
})
