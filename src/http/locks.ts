import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { ServiceError } from '../errors.js'
import { errorResponses, keyParams, lockStateSchema, noQuery, rwLockStateSchema } from './schemas.js'
import { registerHoldRoutes, type HoldRoutesOptions } from './holds.js'

/** /locks/:key — exclusive locks. */
export async function lockRoutes(fastify: FastifyInstance, options: HoldRoutesOptions): Promise<void> {
  registerHoldRoutes(fastify, options, '/locks/:key', 'exclusive', 'locks')

  fastify.withTypeProvider<ZodTypeProvider>().get('/locks/:key', {
    schema: {
      summary: 'Inspect a lock (never shows the token)',
      tags: ['locks'],
      params: keyParams,
      querystring: noQuery,
      response: { 200: lockStateSchema.describe('Held'), ...errorResponses([400, 404, 503]) },
    },
    handler: async (request) => {
      const key = request.params.key
      const state = await options.engine.inspect('lock', key)
      if (!state.writer) throw new ServiceError('lock_not_found', `lock "${key}" is not held`, { key })
      return { key, mode: 'exclusive' as const, ...state.writer, waiters: state.waiters }
    },
  })
}

/** /rwlocks/:key — shared (read) and exclusive (write) holds on one lock. */
export async function rwlockRoutes(fastify: FastifyInstance, options: HoldRoutesOptions): Promise<void> {
  registerHoldRoutes(fastify, options, '/rwlocks/:key/read', 'read', 'rwlocks')
  registerHoldRoutes(fastify, options, '/rwlocks/:key/write', 'write', 'rwlocks')

  fastify.withTypeProvider<ZodTypeProvider>().get('/rwlocks/:key', {
    schema: {
      summary: 'Inspect a read-write lock: writer, reader count, waiting writer, fence (never a token)',
      tags: ['rwlocks'],
      params: keyParams,
      querystring: noQuery,
      response: { 200: rwLockStateSchema.describe('Held by a writer or by readers'), ...errorResponses([400, 404, 503]) },
    },
    handler: async (request) => {
      const key = request.params.key
      const state = await options.engine.inspect('rw', key)
      if (!state.writer && state.readers === 0) throw new ServiceError('lock_not_found', `read-write lock "${key}" is not held`, { key })
      return {
        key,
        writer: state.writer ? { fence: state.writer.fence, remainingMs: state.writer.remainingMs } : null,
        readers: state.readers,
        writerWaiting: state.writerWaiting,
        waiters: state.waiters,
      }
    },
  })
}
