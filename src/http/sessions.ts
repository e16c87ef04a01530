import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Config } from '../config.js'
import type { SessionEngine } from '../locks/sessions.js'
import { noBody, noQuery } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import {
  keepaliveSchema,
  sessionClosedSchema,
  sessionOpenSchemas,
  sessionParams,
  sessionSchema,
  sessionStateSchema,
} from './schemas/sessions.js'

export interface SessionRoutesOptions {
  config: Config
  sessions: SessionEngine
}

/** The API key a session belongs to ('' while the service runs open): another key's session is not found. */
export function sessionOwnerKey(request: FastifyRequest): string {
  return request.caller?.name ?? ''
}

/**
 * /sessions — one lease for many holds. The id is a secret: it is never logged (app.ts redacts it
 * from URLs), and another API key's session is answered as not found.
 */
export async function sessionRoutes(fastify: FastifyInstance, { config, sessions }: SessionRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const open = sessionOpenSchemas(config)

  app.post('/sessions', {
    schema: {
      summary: 'Open a session: one lease for many holds (acquire with `session` to bind a hold to it)',
      operationId: 'openSession',
      tags: ['sessions'],
      querystring: noQuery,
      body: open.body,
      response: { 201: sessionSchema.describe('Opened'), ...errorResponses([400, 401, 413, 415, 429, 503]) },
    },
    handler: async (request, reply) => {
      const body = request.body ?? {}
      const opened = await sessions.open(sessionOwnerKey(request), body.ttlMs ?? config.defaultTtlMs, body.owner, body.lockDelayMs ?? 0)
      return reply.code(201).send(opened)
    },
  })

  app.put('/sessions/:id/keepalive', {
    schema: {
      summary: 'Renew a session and every hold bound to it; answers the holds it still has',
      operationId: 'keepaliveSession',
      tags: ['sessions'],
      params: sessionParams,
      querystring: noQuery,
      body: noBody.describe("None (or {}): a keepalive renews for the session's own TTL, set when it was opened"),
      response: { 200: keepaliveSchema.describe('Renewed'), ...errorResponses([400, 401, 404, 413, 415, 503]) },
    },
    handler: async (request) => sessions.keepalive(sessionOwnerKey(request), request.params.id),
  })

  app.get('/sessions/:id', {
    schema: {
      summary: 'A session: its lease and the holds it has (never a token)',
      operationId: 'inspectSession',
      tags: ['sessions'],
      params: sessionParams,
      querystring: noQuery,
      response: { 200: sessionStateSchema.describe('Live'), ...errorResponses([400, 401, 404, 503]) },
    },
    handler: async (request) => sessions.show(sessionOwnerKey(request), request.params.id),
  })

  app.delete('/sessions/:id', {
    schema: {
      summary: 'End a session: every hold bound to it is released (handed to its waiters)',
      operationId: 'closeSession',
      tags: ['sessions'],
      params: sessionParams,
      querystring: noQuery,
      body: noBody.describe('None (or {})'),
      response: { 200: sessionClosedSchema.describe('Closed'), ...errorResponses([400, 401, 404, 413, 415, 503]) },
    },
    handler: async (request) => ({ closed: true as const, holds: await sessions.close(sessionOwnerKey(request), request.params.id) }),
  })
}
