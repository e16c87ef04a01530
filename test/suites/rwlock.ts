import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { grantSchema } from '../../src/http/schemas/holds.js'
import { rwLockStateSchema } from '../../src/http/schemas/locks.js'
import { lockKeys } from '../../src/locks/keys.js'
import { startApp } from '../../harness/app.js'
import type { Config } from '../../src/config.js'
import type { RedisProcess } from '../../harness/redis-server.js'

/** What the suite reads from Redis directly: a client of the backend (for a cluster, a cluster client). */
interface DirectClient {
  pttl(key: string): Promise<number>
  exists(...keys: string[]): Promise<number>
  quit(): Promise<unknown>
}

/**
 * /rwlocks as the README and openapi.yaml describe it, runnable against one Redis or a quorum of N, or (with
 * `backend.overrides`) a Redis Cluster or a Sentinel-managed primary, read through `backend.client`.
 */
export async function rwlockSuite(
  t: Test,
  nodes: readonly RedisProcess[],
  backend: { overrides?: Partial<Config>; client?: () => DirectClient } = {},
): Promise<void> {
  const { app, config } = await startApp(
    t,
    nodes.map((n) => n.url),
    { maxReaders: 5, ...backend.overrides },
  )
  const call = async (method: 'POST' | 'PUT' | 'DELETE' | 'GET', url: string, token?: string, body?: object) => {
    const res = await app.inject({ method, url, headers: token ? { 'lock-token': token } : {}, ...(body ? { payload: body } : {}) })
    const json = res.json() as Record<string, unknown>
    if (res.statusCode >= 400) errorSchema.parse(json)
    return { status: res.statusCode, body: json }
  }
  const tok = (name: string) => `${name}-rw-token-0123456789`
  let n = 0
  const fresh = () => `rw${++n}-${Date.now()}`

  t.test('compatibility: read+read share; read+write, write+write, write+read conflict', async (t) => {
    const k1 = fresh()
    const r1 = await call('POST', `/rwlocks/${k1}/read`, tok('r1'))
    t.equal(r1.status, 201)
    t.equal(grantSchema.parse(r1.body).mode, 'read')
    t.equal((await call('POST', `/rwlocks/${k1}/read`, tok('r2'))).status, 201, 'read + read')
    const w = await call('POST', `/rwlocks/${k1}/write`, tok('w1'))
    t.equal(w.status, 409, 'read + write: held')
    t.equal(w.body.error, 'lock_held')

    const k2 = fresh()
    const w1 = await call('POST', `/rwlocks/${k2}/write`, tok('w1'))
    t.equal(w1.status, 201)
    t.equal(w1.body.mode, 'write')
    t.equal((await call('POST', `/rwlocks/${k2}/write`, tok('w2'))).status, 409, 'write + write: held')
    t.equal((await call('POST', `/rwlocks/${k2}/read`, tok('r1'))).status, 409, 'write + read: held')
  })

  t.test('each reader has its own token, TTL, fence and count; one lapsing or leaving frees no other', async (t) => {
    const key = fresh()
    const short = await call('POST', `/rwlocks/${key}/read?ttl=150`, tok('short'))
    const long = await call('POST', `/rwlocks/${key}/read?ttl=10s`, tok('long'))
    const third = await call('POST', `/rwlocks/${key}/read?ttl=10s`, tok('third'))
    t.ok(
      (long.body.fence as number) > (short.body.fence as number) && (third.body.fence as number) > (long.body.fence as number),
      'each hold has its own, increasing fence',
    )
    t.equal((await call('GET', `/rwlocks/${key}`)).body.readers, 3)
    await sleep(250)
    const state = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}`)).body)
    t.equal(state.readers, 2, 'the short reader lapsed, the others did not')
    t.equal((await call('PUT', `/rwlocks/${key}/read/renew`, tok('long'))).status, 200, 'the long reader still renews')
    t.equal((await call('DELETE', `/rwlocks/${key}/read`, tok('third'))).status, 200)
    t.equal((await call('GET', `/rwlocks/${key}`)).body.readers, 1, 'releasing one reader leaves the other')
    const lapsed = await call('PUT', `/rwlocks/${key}/read/renew`, tok('short'))
    t.equal(lapsed.status, 409, 'the lapsed reader no longer holds (others do): not_owner')
    t.equal(lapsed.body.error, 'not_owner')
    t.equal((await call('DELETE', `/rwlocks/${key}/read`, tok('long'))).status, 200)
    t.equal((await call('GET', `/rwlocks/${key}`)).status, 404, 'free once the last reader left')
    t.equal((await call('DELETE', `/rwlocks/${key}/read`, tok('long'))).status, 404, 'then release is 404')
  })

  t.test('idempotent and reentrant re-acquire per token, for reads and writes', async (t) => {
    const key = fresh()
    const a = await call('POST', `/rwlocks/${key}/read`, tok('a'))
    const again = await call('POST', `/rwlocks/${key}/read`, tok('a'))
    t.same([again.status, again.body.fence, again.body.holdCount], [200, a.body.fence, 1])
    const re = await call('POST', `/rwlocks/${key}/read`, undefined, { token: tok('a'), reentrant: true })
    t.same([re.status, re.body.holdCount], [200, 2])
    t.same((await call('DELETE', `/rwlocks/${key}/read`, tok('a'))).body, { key, released: false, holdCount: 1 })
    t.same((await call('DELETE', `/rwlocks/${key}/read`, tok('a'))).body, { key, released: true, holdCount: 0 })
    const wk = fresh()
    await call('POST', `/rwlocks/${wk}/write`, tok('w'))
    const wre = await call('POST', `/rwlocks/${wk}/write`, undefined, { token: tok('w'), reentrant: true })
    t.same([wre.status, wre.body.holdCount], [200, 2])
  })

  t.test('wrong token, expired hold, renew', async (t) => {
    const key = fresh()
    await call('POST', `/rwlocks/${key}/write?ttl=5s`, tok('w'))
    t.equal((await call('DELETE', `/rwlocks/${key}/write`, tok('x'))).body.error, 'not_owner')
    t.equal((await call('PUT', `/rwlocks/${key}/write/renew`, tok('x'))).body.error, 'not_owner')
    t.equal((await call('DELETE', `/rwlocks/${key}/read`, tok('w'))).body.error, 'not_owner', 'a write token is no read hold')
    const renewed = await call('PUT', `/rwlocks/${key}/write/renew`, tok('w'), { token: tok('w'), ttlMs: 150 })
    t.same([renewed.status, renewed.body.ttlMs, renewed.body.mode], [200, 150, 'write'])
    await sleep(250)
    t.equal((await call('PUT', `/rwlocks/${key}/write/renew`, tok('w'))).body.error, 'lock_not_found', 'expired')
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('r'))).status, 201, 'readers get in after the writer lapsed')
  })

  t.test('downgrade: a writer takes a read hold with its token, then drops the write — no gap', async (t) => {
    const key = fresh()
    const w = await call('POST', `/rwlocks/${key}/write`, tok('d'))
    const r = await call('POST', `/rwlocks/${key}/read`, tok('d'))
    t.equal(r.status, 201, 'the writer may read')
    t.ok((r.body.fence as number) > (w.body.fence as number))
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('other'))).status, 409, 'others still wait for the writer')
    t.equal((await call('DELETE', `/rwlocks/${key}/write`, tok('d'))).status, 200)
    const state = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}`)).body)
    t.same([state.writer, state.readers], [null, 1], 'the read hold remains')
    t.equal((await call('POST', `/rwlocks/${key}/read`, tok('other'))).status, 201, 'other readers join')
    t.equal((await call('POST', `/rwlocks/${key}/write`, tok('x'))).status, 409, 'writers do not')
  })

  t.test('upgrade is refused at once with 409 upgrade_not_supported, never a deadlock', async (t) => {
    const key = fresh()
    await call('POST', `/rwlocks/${key}/read`, tok('u'))
    const up = await call('POST', `/rwlocks/${key}/write`, tok('u'))
    t.equal(up.status, 409)
    t.equal(up.body.error, 'upgrade_not_supported')
    t.match(up.body.message, /release the read hold first/)
    t.equal((await call('GET', `/rwlocks/${key}`)).body.writer, null, 'no write hold was taken')
  })

  t.test('inspect: writer, reader count, fence; never a token; namespaces are separate', async (t) => {
    const key = fresh()
    t.equal((await call('GET', `/rwlocks/${key}`)).status, 404)
    const w = await call('POST', `/rwlocks/${key}/write?ttl=4s`, tok('i'))
    const s = rwLockStateSchema.parse((await call('GET', `/rwlocks/${key}`)).body)
    t.same(
      { ...s, writer: s.writer && { ...s.writer, remainingMs: 0 } },
      { key, writer: { fence: w.body.fence, remainingMs: 0 }, readers: 0, writerWaiting: false, waiters: 0 },
    )
    t.ok(s.writer!.remainingMs > 3000)
    t.notMatch(JSON.stringify(s), tok('i'))
    t.equal((await call('GET', `/locks/${key}`)).status, 404, '/locks/x is another lock')
    t.equal((await call('POST', `/locks/${key}`, tok('other'))).status, 201, 'and can be taken while /rwlocks/x is held')
  })

  t.test('reader cap: over MAX_READERS is 429 too_many_readers', async (t) => {
    const key = fresh()
    for (let i = 0; i < config.maxReaders; i++) t.equal((await call('POST', `/rwlocks/${key}/read`, tok(`cap${i}`))).status, 201)
    const over = await call('POST', `/rwlocks/${key}/read`, tok('over'))
    t.equal(over.status, 429)
    t.equal(over.body.error, 'too_many_readers')
    t.match(over.body.message, /MAX_READERS/)
    t.equal((await call('GET', `/rwlocks/${key}`)).body.readers, config.maxReaders, 'nothing was added')
  })

  t.test('the Redis keys live exactly as long as the longest hold', async (t) => {
    const key = fresh()
    await call('POST', `/rwlocks/${key}/read?ttl=300`, tok('a'))
    await call('POST', `/rwlocks/${key}/read?ttl=800`, tok('b'))
    await call('POST', `/rwlocks/${key}/read?ttl=200`, tok('c'))
    const keys = lockKeys(config.keyPrefix, 'rw', key)
    const client: DirectClient = backend.client?.() ?? nodes[0]!.client()
    t.teardown(() => client.quit())
    const pttl = await client.pttl(keys.holds)
    t.ok(pttl > 600 && pttl <= 800, `holds key TTL ${pttl} covers the longest hold (800) and no more`)
    const readersPttl = await client.pttl(keys.readers)
    t.ok(readersPttl > 600 && readersPttl <= 800, `readers key TTL ${readersPttl} too (not -1: no TTL, nor -2: no key)`)
    await sleep(900)
    t.same(await client.exists(keys.holds, keys.readers), 0, 'both keys are gone after the last hold lapsed')
  })
}
