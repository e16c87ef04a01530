import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { watchResultSchema } from '../../src/http/schemas/watch.js'
import { startListening } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { startRedis, startRedisCluster, type RedisProcess } from '../../harness/redis-server.js'

/** The lost-lock signal (issue #16): a watcher on another replica learns why and when its hold went. */
async function watchSuite(t: Test, nodes: readonly RedisProcess[]): Promise<void> {
  const urls = nodes.map((n) => n.url)
  // Two replicas of the service on the same Redis: holders use A, watchers B.
  const a = await startListening(t, urls, { logLevel: 'warn' })
  const b = await startListening(t, urls, { logLevel: 'warn' })
  const tok = (name: string) => `${name}-watch-token-0123456789`
  let n = 0
  const fresh = () => `watch${++n}-${Date.now()}`
  const watch = async (path: string, token?: string) => {
    const res = await request(b.address, 'GET', path, token ? { token, timeoutMs: 20_000 } : { timeoutMs: 20_000 })
    if (res.status !== 200) errorSchema.parse(res.body)
    return { status: res.status, body: res.status === 200 ? watchResultSchema.parse(res.body) : res.body, at: performance.now() }
  }
  const acquire = async (path: string, token: string, body: object = {}) => {
    const res = await request(a.address, 'POST', path, { token, body })
    if (res.status !== 201) throw new Error(`acquire ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }

  t.test('force-release reaches a watcher on another replica at once (a push)', async (t) => {
    for (const [hold, watchPath, force] of [
      ['/locks/K', '/locks/K/watch', '/locks/K?force=true'],
      ['/rwlocks/K/write', '/rwlocks/K/write/watch', '/rwlocks/K/write?force=true'],
      ['/rwlocks/K/read', '/rwlocks/K/read/watch', '/rwlocks/K/read?force=true&fence=F'],
      ['/semaphores/K?limit=2', '/semaphores/K/watch', '/semaphores/K?force=true&fence=F'],
    ] as const) {
      const key = fresh()
      const grant = await acquire(hold.replace('K', key), tok('holder'), { ttlMs: 30_000 })
      const watching = watch(`${watchPath.replace('K', key)}?wait=10s`, tok('holder'))
      await sleep(150)
      const sent = performance.now()
      const forced = await request(a.address, 'DELETE', force.replace('K', key).replace('F', String(grant.fence)))
      t.equal(forced.status, 200, `${hold}: force-released`)
      const seen = await watching
      t.match(seen.body, { held: false, reason: 'force_released' }, `${hold}: reason force_released`)
      const latency = seen.at - sent
      t.ok(latency < 1000, `${hold}: the watcher knew within ${latency.toFixed(1)} ms (a push; not after the 30 s lease)`)
    }
  })

  t.test('release, expiry and a late watcher: the right reason and time', async (t) => {
    const key = fresh()
    await acquire(`/locks/${key}`, tok('r'), { ttlMs: 30_000 })
    const watching = watch(`/locks/${key}/watch?wait=10s`, tok('r'))
    await sleep(100)
    t.equal((await request(a.address, 'DELETE', `/locks/${key}`, { token: tok('r') })).status, 200)
    t.match((await watching).body, { held: false, reason: 'released' })
    const late = await watch(`/locks/${key}/watch`, tok('r'))
    t.match(late.body, { held: false, reason: 'released' }, 'a watcher that asks just after still learns it was released')

    const key2 = fresh()
    const grant = await acquire(`/locks/${key2}`, tok('e'), { ttlMs: 800 })
    const expected = Date.parse(grant.expiresAt as string)
    const expiring = await watch(`/locks/${key2}/watch?wait=10s`, tok('e'))
    t.match(expiring.body, { held: false, reason: 'expired' })
    const at = Date.parse((expiring.body as { at: string }).at)
    t.ok(Math.abs(at - expected) < 500, `at is the expiry (${at - expected} ms off expiresAt)`)
    t.ok(Date.now() - expected < 1500, `answered promptly after the expiry (${Date.now() - expected} ms)`)
  })

  t.test('a token that does not hold it gets what a renew would answer, not "expired"', async (t) => {
    const nobody = await watch(`/locks/${fresh()}/watch`, tok('x'))
    t.equal(nobody.status, 404, 'nobody holds it: 404')
    t.match(nobody.body, { error: 'lock_not_found' })
    for (const [hold, watchPath] of [
      ['/locks/K', '/locks/K/watch'],
      ['/rwlocks/K/write', '/rwlocks/K/write/watch'],
      ['/rwlocks/K/read', '/rwlocks/K/read/watch'],
      ['/semaphores/K?limit=2', '/semaphores/K/watch'],
    ] as const) {
      const key = fresh()
      await acquire(hold.replace('K', key), tok('owner'), { ttlMs: 30_000 })
      const typo = await watch(watchPath.replace('K', key), tok('typo'))
      t.equal(typo.status, 409, `${hold}: held by another token: 409`)
      t.match(typo.body, { error: 'not_owner' }, `${hold}: not_owner, as a renew answers`)
      const renew = await request(a.address, 'PUT', `${hold.replace('K', key).replace(/\?.*/, '')}/renew`, { token: tok('typo') })
      t.equal(renew.status, typo.status, `${hold}: the same status as the renew (${renew.status})`)
    }
    // An event stream refused at its first look answers with the status, not a 200 stream with an error.
    const key = fresh()
    await acquire(`/locks/${key}`, tok('owner'), { ttlMs: 30_000 })
    const sse = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = http.get(
        new URL(`/locks/${key}/watch?wait=10s`, b.address),
        { headers: { accept: 'text/event-stream', 'lock-token': tok('typo') } },
        (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (body += chunk))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }))
        },
      )
      req.on('error', reject)
    })
    t.equal(sse.status, 409, 'event stream: 409')
    t.match(sse.type, /application\/json/)
    t.match(errorSchema.parse(JSON.parse(sse.body)), { error: 'not_owner' })
  })

  t.test('held: the wait runs out; a renewal moves the expiry', async (t) => {
    const key = fresh()
    await acquire(`/locks/${key}`, tok('h'), { ttlMs: 700 })
    const started = performance.now()
    const renewing = (async () => {
      for (let i = 0; i < 4; i++) {
        await sleep(300)
        await request(a.address, 'PUT', `/locks/${key}/renew`, { token: tok('h') })
      }
    })()
    const res = await watch(`/locks/${key}/watch?wait=1500ms`, tok('h'))
    await renewing
    t.equal(res.body.held, true, 'still held after 1.5 s of a renewed 0.7 s lease')
    t.ok((res.body as { remainingMs: number }).remainingMs > 0)
    t.ok(performance.now() - started >= 1400, 'answered when the wait ran out')
    await request(a.address, 'DELETE', `/locks/${key}`, { token: tok('h') })
  })

  t.test('sessions: a bound hold reports session_lost when its session is closed or lapses; the session watch', async (t) => {
    const open = async (ttlMs: number) => (await request(a.address, 'POST', '/sessions', { body: { ttlMs } })).body.id as string
    const s = await open(30_000)
    const key = fresh()
    await acquire(`/locks/${key}`, tok('s'), { session: s })
    const holdWatch = watch(`/locks/${key}/watch?wait=10s`, tok('s'))
    const sessionWatch = watch(`/sessions/${s}/watch?wait=10s`)
    await sleep(150)
    const sent = performance.now()
    t.equal((await request(a.address, 'DELETE', `/sessions/${s}`)).status, 200)
    const [h, w] = await Promise.all([holdWatch, sessionWatch])
    t.match(h.body, { held: false, reason: 'session_lost' }, 'the hold: session_lost')
    t.match(w.body, { held: false, reason: 'released' }, 'the session: released (closed)')
    t.ok(h.at - sent < 1000 && w.at - sent < 1000, `both within ${Math.max(h.at - sent, w.at - sent).toFixed(1)} ms`)
    t.match((await watch(`/sessions/${s}/watch`)).body, { held: false, reason: 'released' }, 'a late session watcher')

    const lapsing = await open(600)
    const key2 = fresh()
    await acquire(`/locks/${key2}`, tok('s2'), { session: lapsing })
    const [h2, w2] = await Promise.all([watch(`/locks/${key2}/watch?wait=10s`, tok('s2')), watch(`/sessions/${lapsing}/watch?wait=10s`)])
    t.match(h2.body, { held: false, reason: 'session_lost' }, 'a bound hold whose session lapsed: session_lost')
    t.match(w2.body, { held: false, reason: 'expired' }, 'the lapsed session: expired')
  })

  t.test('Server-Sent Events on the same route', async (t) => {
    const key = fresh()
    const grant = await acquire(`/locks/${key}`, tok('sse'), { ttlMs: 30_000 })
    const events: string[] = []
    const done = new Promise<void>((resolve, reject) => {
      const req = http.get(
        new URL(`/locks/${key}/watch?wait=10s`, b.address),
        { headers: { accept: 'text/event-stream', 'lock-token': tok('sse') } },
        (res) => {
          t.equal(res.statusCode, 200)
          t.match(res.headers['content-type'], /text\/event-stream/)
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => events.push(chunk))
          res.on('end', resolve)
        },
      )
      req.on('error', reject)
    })
    await sleep(200)
    await request(a.address, 'DELETE', `/locks/${key}?force=true`)
    await done
    const text = events.join('')
    t.match(text, /^event: held\ndata: \{"held":true,"remainingMs":\d+\}\n\n/, 'held first')
    t.match(text, /event: lost\ndata: \{"held":false,"reason":"force_released","at":"[^"]+"\}\n\n$/, 'then lost, and the stream ends')
    t.notOk(text.includes(String(grant.token)), 'no token in the stream')
  })

  t.test('bad input and hang-ups', async (t) => {
    const key = fresh()
    await acquire(`/locks/${key}`, tok('bad'), { ttlMs: 30_000 })
    const cases: [string, string | undefined, number][] = [
      [`/locks/${key}/watch`, undefined, 400],
      [`/locks/${key}/watch?wait=soon`, tok('bad'), 400],
      [`/locks/${key}/watch?wait=10h`, tok('bad'), 400],
      [`/locks/${key}/watch?token=short`, undefined, 400],
      [`/locks/${key}/watch?other=1`, tok('bad'), 400],
      ['/sessions/not-a-session/watch', undefined, 400],
      [`/sessions/${tok('bad')}/watch`, undefined, 400],
    ]
    for (const [path, token, status] of cases) {
      const res = await request(b.address, 'GET', path, token ? { token } : {})
      t.equal(res.status, status, `${path}: ${status}`)
    }
    const gauge = async () => Number(/^lock_watchers (\d+)/m.exec(String((await b.app.inject({ url: '/metrics' })).body))?.[1])
    const controller = new AbortController()
    const hanging = fetch(new URL(`/locks/${key}/watch?wait=10s`, b.address), {
      headers: { 'lock-token': tok('bad') },
      signal: controller.signal,
    }).catch(() => 'aborted')
    await sleep(200)
    t.equal(await gauge(), 1, 'one watcher parked')
    controller.abort()
    await hanging
    await sleep(100)
    t.equal(await gauge(), 0, 'gone with its client')
  })
}

t.test('watch on one Redis (two replicas)', async (t) => {
  await watchSuite(t, [await startRedis({ t })])
})

t.test('watch on a quorum of 3 (two replicas)', async (t) => {
  await watchSuite(t, await startRedisCluster(3, { t }))
})
