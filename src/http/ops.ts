import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Metrics } from '../metrics.js'
import type { Quorum } from '../redis/quorum.js'
import { noQuery } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { healthSchema, readinessSchema, textBody } from './schemas/ops.js'
import { countedAnswers } from '../locks/votes.js'

export interface OpsRoutesOptions {
  quorum: Quorum
  metrics: Metrics
  openapiPath: URL
}

/** Liveness, readiness, metrics and the served contract. */
export async function opsRoutes(fastify: FastifyInstance, { quorum, metrics, openapiPath }: OpsRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>()

  app.get('/healthz', {
    config: { access: 'public' },
    schema: {
      summary: 'Liveness: the process answers',
      operationId: 'getHealth',
      tags: ['operations'],
      security: [],
      querystring: noQuery,
      response: { 200: healthSchema, ...errorResponses([400]) },
    },
    handler: async () => ({ status: 'ok' as const }),
  })

  app.get('/readyz', {
    config: { access: 'public' },
    schema: {
      summary: 'Readiness: a majority of Redis nodes answers and may vote (per-node detail)',
      operationId: 'getReadiness',
      tags: ['operations'],
      security: [],
      querystring: noQuery,
      response: {
        200: readinessSchema.describe('Ready'),
        503: readinessSchema.describe('Not ready: fewer than a majority of nodes answer and may vote'),
        ...errorResponses([400]),
      },
    },
    handler: async (_request, reply) => {
      // Ready = the backend can grant: a majority answers and may vote (the vote rule).
      const tally = await quorum.ask((node) => node.ping())
      const ready = countedAnswers(tally) >= quorum.majority
      const nodes = quorum.nodes.map((n) => ({ ...n.status(), up: tally.answers.some((a) => a.ok && a.node === n) }))
      return reply.code(ready ? 200 : 503).send({ ready, majority: quorum.majority, nodes })
    },
  })

  app.get('/metrics', {
    config: { access: 'metrics' },
    schema: {
      summary: 'Prometheus text exposition (needs an API key with PROTECT_METRICS=true)',
      operationId: 'getMetrics',
      tags: ['operations'],
      produces: ['text/plain'],
      querystring: noQuery,
      response: { 200: textBody('Prometheus text exposition format'), ...errorResponses([400, 401]) },
    },
    handler: async (_request, reply) => {
      quorum.publishGauges()
      const text = await metrics.registry.metrics()
      return reply.type(metrics.registry.contentType).send(text)
    },
  })

  let openapiText: string | undefined
  app.get('/openapi.yaml', {
    config: { access: 'public' },
    schema: {
      summary: 'This contract, as OpenAPI 3',
      operationId: 'getOpenApi',
      tags: ['operations'],
      security: [],
      produces: ['application/yaml'],
      querystring: noQuery,
      response: { 200: textBody('This document'), ...errorResponses([400]) },
    },
    handler: async (_request, reply) => {
      openapiText ??= await readFile(openapiPath, 'utf8')
      return reply.type('application/yaml; charset=utf-8').send(openapiText)
    },
  })
}
