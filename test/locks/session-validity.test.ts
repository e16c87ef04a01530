/**
 * A session-bound hold is valid only while its session is: a bind made when the session has less left
 * than the shortest hold TTL (100 ms) must not be answered with a validity that outlives the session.
 */
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { sessionKeys } from '../../src/locks/keys.js'
import { sessionRef } from '../../src/locks/session-id.js'

t.test('a bind in the last 60 ms of a session: validity at most what the session has left, or session_not_found', async (t) => {
  const redis = await startRedis({ t })
  const { app, config } = await startApp(t, [redis.url])
  const direct = redis.client()
  t.teardown(() => direct.quit())

  const opened = await app.inject({ method: 'POST', url: '/sessions', payload: { ttlMs: 10_000 } })
  t.equal(opened.statusCode, 201)
  const id = (opened.json() as { id: string }).id
  // The session's end moved to 60 ms from now (Redis time), as if its TTL had nearly run out.
  const [seconds, micros] = (await direct.time()) as [string | number, string | number]
  const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  await direct.hset(sessionKeys(config.keyPrefix, sessionRef(id)).session, 'exp', String(nowMs + 60))

  const res = await app.inject({ method: 'POST', url: `/locks/short-session?session=${id}` })
  if (res.statusCode === 404) {
    t.equal((res.json() as { error: string }).error, 'session_not_found', 'the session ran out first (a slow machine)')
  } else {
    t.equal(res.statusCode, 201, res.body)
    const validityMs = (res.json() as { validityMs: number }).validityMs
    t.ok(validityMs <= 60, `validityMs ${validityMs} within the 60 ms the session had left`)
  }
})
