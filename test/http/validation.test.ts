/**
 * The routes' validator (src/http/validation.ts) inside a real Fastify: request parts are checked with
 * their zod schemas; headers are checked and left as they came, so reading request.headers copies
 * nothing. The shortcuts it takes (an empty part, a one-field query or body seen before, a lock key
 * and a token tested against their patterns) answer exactly as zod does.
 */
import Fastify from 'fastify'
import t from 'tap'
import { validatorCompiler } from '../../src/http/validation.js'
import { keyParams, tokenHeaders } from '../../src/http/schemas/common.js'
import { acquireSchemas } from '../../src/http/schemas/holds.js'

const limits = { maxTtlMs: 60_000, maxWaitMs: 10_000, maxSemaphoreLimit: 10, maxLockDelayMs: 10_000 }

async function app() {
  const fastify = Fastify({ routerOptions: { maxParamLength: 1024 } })
  fastify.setValidatorCompiler(validatorCompiler)
  fastify.get('/probe/:key', { schema: { params: keyParams, headers: tokenHeaders } }, async (request) => {
    const headers = request.headers
    return {
      raw: headers === request.raw.headers,
      token: headers['lock-token'] ?? null,
      accept: headers.accept ?? null,
      params: request.params,
    }
  })
  const acquire = acquireSchemas(limits)
  fastify.post(
    '/acquire/:key',
    { schema: { params: keyParams, querystring: acquire.querystring, body: acquire.body } },
    async (request) => ({
      query: request.query,
      body: request.body ?? null,
    }),
  )
  await fastify.ready()
  return fastify
}

t.test('headers: validated, then the raw headers are what the handler reads', async (t) => {
  const fastify = await app()
  t.teardown(() => fastify.close())
  const ok = await fastify.inject({ url: '/probe/k1', headers: { 'lock-token': 'tokenA-0123456789abc', accept: 'text/event-stream' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { raw: true, token: 'tokenA-0123456789abc', accept: 'text/event-stream', params: { key: 'k1' } })

  const bad = await fastify.inject({ url: '/probe/k1', headers: { 'lock-token': 'short' } })
  t.equal(bad.statusCode, 400, 'a malformed token is refused')
  t.match(bad.body, /tokens are/)

  const badKey = await fastify.inject({ url: '/probe/bad%7Bkey%7D', headers: { 'lock-token': 'tokenA-0123456789abc' } })
  t.equal(badKey.statusCode, 400, 'other parts are validated as before')
})

t.test('the same one-field query or body again: the same answer as zod gave the first time, refusals every time', async (t) => {
  const fastify = await app()
  t.teardown(() => fastify.close())
  for (let round = 1; round <= 3; round++) {
    const query = await fastify.inject({ method: 'POST', url: '/acquire/k1?ttl=2s' })
    t.same(query.json(), { query: { ttl: 2000 }, body: null }, `ttl=2s is 2000 ms (round ${round})`)
    const body = await fastify.inject({ method: 'POST', url: '/acquire/k1', payload: { ttlMs: 30_000 } })
    t.same(body.json(), { query: {}, body: { ttlMs: 30_000 } }, `a body of one field is taken as sent (round ${round})`)
    const tooLong = await fastify.inject({ method: 'POST', url: '/acquire/k1', payload: { ttlMs: 90_000 } })
    t.equal(tooLong.statusCode, 400, `a TTL over the limit is refused every time (round ${round})`)
    t.match(tooLong.body, /MAX_TTL_MS/)
    const asText = await fastify.inject({ method: 'POST', url: '/acquire/k1', payload: { ttlMs: '30000' } })
    t.equal(asText.statusCode, 400, `the same value as a string is not the number seen before (round ${round})`)
    const badOwner = await fastify.inject({ method: 'POST', url: '/acquire/k1', payload: { owner: 'a\u0001b' } })
    t.equal(badOwner.statusCode, 400, `an owner with a control character is refused (round ${round})`)
  }
  const both = await fastify.inject({ method: 'POST', url: '/acquire/k1?ttl=3s&wait=1s', payload: { ttlMs: 30_000, reentrant: true } })
  t.same(both.json(), { query: { ttl: 3000, wait: 1000 }, body: { ttlMs: 30_000, reentrant: true } }, 'several fields: zod as always')
  const unknown = await fastify.inject({ method: 'POST', url: '/acquire/k1?nope=1' })
  t.equal(unknown.statusCode, 400, 'an unknown query parameter is refused')
  const empty = await fastify.inject({ method: 'POST', url: '/acquire/k1' })
  t.same(empty.json(), { query: {}, body: null }, 'no query, no body: all defaults')
})

t.test('a lock key and a Lock-Token checked by their patterns: a session id and a key too long are refused', async (t) => {
  const fastify = await app()
  t.teardown(() => fastify.close())
  const session = await fastify.inject({ url: '/probe/k1', headers: { 'lock-token': `s.${'a'.repeat(22)}` } })
  t.equal(session.statusCode, 400)
  t.match(session.body, /session id, not a lock token/)
  const longKey = await fastify.inject({ url: `/probe/${'k'.repeat(201)}` })
  t.equal(longKey.statusCode, 400, 'a key of 201 characters')
  const maxKey = await fastify.inject({ url: `/probe/${'k'.repeat(200)}` })
  t.equal(maxKey.statusCode, 200, 'a key of 200 characters')
  const none = await fastify.inject({ url: '/probe/k1' })
  t.same(none.json(), { raw: true, token: null, accept: null, params: { key: 'k1' } }, 'no token: nothing to check')
})
