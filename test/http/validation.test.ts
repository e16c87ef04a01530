/**
 * The routes' validator (src/http/validation.ts) inside a real Fastify: request parts are checked with
 * their zod schemas; headers are checked and left as they came, so reading request.headers copies
 * nothing.
 */
import Fastify from 'fastify'
import t from 'tap'
import { validatorCompiler } from '../../src/http/validation.js'
import { keyParams, tokenHeaders } from '../../src/http/schemas/common.js'

async function app() {
  const fastify = Fastify()
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
