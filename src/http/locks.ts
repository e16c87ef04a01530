import type { FastifyInstance, FastifyReply } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Config } from '../config.js'
import type { ExclusiveLocks } from '../locks/exclusive.js'
import type { Observed } from '../locks/observe.js'
import type { Grant } from '../locks/types.js'
import {
  acquireSchemas,
  errorResponses,
  grantSchema,
  keyParams,
  noQuery,
  lockStateSchema,
  releaseResultSchema,
  releaseSchemas,
  renewSchemas,
  tokenHeaders,
} from './schemas.js'
import { newToken, oneOf, requireToken } from './tokens.js'

export interface LockRoutesOptions {
  config: Config
  locks: ExclusiveLocks
  observed: Observed
}

/** The wire shape of a grant: the engine's Grant less its internal flags. */
export function grantBody(grant: Grant) {
  const { regranted: _regranted, ...body } = grant
  return body
}

export function sendGrant(reply: FastifyReply, grant: Grant) {
  return reply.code(grant.regranted ? 200 : 201).send(grantBody(grant))
}

/** /locks/:key — exclusive locks. */
export async function lockRoutes(fastify: FastifyInstance, { config, locks, observed }: LockRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const acquire = acquireSchemas(config)
  const renew = renewSchemas(config)

  app.post('/locks/:key', {
    schema: {
      summary: 'Acquire an exclusive lock',
      tags: ['locks'],
      params: keyParams,
      querystring: acquire.querystring,
      headers: tokenHeaders,
      body: acquire.body,
      response: { 201: grantSchema.describe('Granted: a new hold'), 200: grantSchema.describe('Re-granted to the token that already held it'), ...errorResponses(400, 409, 413, 415, 503) },
    },
    handler: async (request, reply) => {
      const body = request.body ?? {}
      const ttlMs = oneOf('ttl', request.query.ttl, body.ttlMs) ?? config.defaultTtlMs
      const token = oneOf('token', request.headers['lock-token'], body.token) ?? newToken()
      const grant = await observed.acquire('exclusive', () =>
        locks.acquire({ key: request.params.key, token, ttlMs, reentrant: body.reentrant ?? false }),
      )
      return sendGrant(reply, grant)
    },
  })

  app.put('/locks/:key/renew', {
    schema: {
      summary: 'Extend a held lock (owner only)',
      tags: ['locks'],
      params: keyParams,
      querystring: renew.querystring,
      headers: tokenHeaders,
      body: renew.body,
      response: { 200: grantSchema.describe('Renewed'), ...errorResponses(400, 404, 409, 413, 415, 503) },
    },
    handler: async (request, reply) => {
      const body = request.body ?? {}
      const token = requireToken(oneOf('token', request.headers['lock-token'], body.token))
      const ttlMs = oneOf('ttl', request.query.ttl, body.ttlMs)
      const grant = await observed.renew('exclusive', () => locks.renew({ key: request.params.key, token, ttlMs }))
      return reply.code(200).send(grantBody(grant))
    },
  })

  app.delete('/locks/:key', {
    schema: {
      summary: 'Release a lock (owner only)',
      tags: ['locks'],
      params: keyParams,
      querystring: releaseSchemas.querystring,
      headers: tokenHeaders,
      body: releaseSchemas.body,
      response: { 200: releaseResultSchema.describe('Released, or one reentrant hold dropped'), ...errorResponses(400, 404, 409, 413, 415, 503) },
    },
    handler: async (request) => {
      const token = requireToken(oneOf('token', request.headers['lock-token'], request.body?.token, request.query.token))
      return observed.release('exclusive', () => locks.release({ key: request.params.key, token }))
    },
  })

  app.get('/locks/:key', {
    schema: {
      summary: 'Inspect a lock (never shows the token)',
      tags: ['locks'],
      params: keyParams,
      querystring: noQuery,
      response: { 200: lockStateSchema.describe('Held'), ...errorResponses(400, 404, 503) },
    },
    handler: async (request) => locks.inspect(request.params.key),
  })
}
