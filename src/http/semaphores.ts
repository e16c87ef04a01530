import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { LockState } from '../locks/types.js'
import { authorizeAdmin, authorizeKey } from './auth.js'
import { registerHoldRoutes, type HoldRoutesOptions } from './holds.js'
import { registerListing } from './listing.js'
import { delayOf, notHeld, ownerOf, ownersOf } from './locks.js'
import { keyParams } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { semaphoreInspectQuery, semaphoreListSchema, semaphoreStateSchema } from './schemas/semaphores.js'

/** What a semaphore shows (never a token); with its holds in the admin views. */
function semaphoreView(key: string, state: LockState) {
  return {
    key,
    limit: state.limit,
    permitsInUse: state.permitsInUse,
    holders: state.readers,
    waiters: state.waiters,
    ...ownersOf(state),
    ...delayOf(state),
    ...(state.readerHolds
      ? {
          holds: state.readerHolds.map(({ fence, permits, remainingMs, holdCount }) => ({
            fence,
            permits,
            remainingMs,
            holdCount,
            ...ownerOf(state, fence),
          })),
        }
      : {}),
  }
}

/** /semaphores/:key — at most `limit` permits held at once, each hold a lease of its own. */
export async function semaphoreRoutes(fastify: FastifyInstance, options: HoldRoutesOptions): Promise<void> {
  registerHoldRoutes(fastify, options, '/semaphores/:key', 'permit', 'semaphores')
  const app = fastify.withTypeProvider<ZodTypeProvider>()

  app.get('/semaphores/:key', {
    schema: {
      summary: 'Inspect a semaphore: limit, permits in use, holders, waiters (never a token)',
      operationId: 'inspectSemaphore',
      tags: ['semaphores'],
      params: keyParams,
      querystring: semaphoreInspectQuery,
      response: { 200: semaphoreStateSchema.describe('Held, or waited for'), ...errorResponses([400, 401, 403, 404, 503]) },
    },
    handler: async (request) => {
      const key = request.params.key
      authorizeKey(request, key)
      if (request.query.holds) authorizeAdmin(request, 'inspect semaphore holds', { key })
      const state = await options.engine.inspect('sem', key, request.query.holds === true)
      if (state.readers === 0 && state.waiters === 0) throw notHeld(key, `semaphore "${key}" has no holders and no waiters`, state)
      return semaphoreView(key, state)
    },
  })

  registerListing(fastify, options.engine, {
    path: '/semaphores',
    namespace: 'sem',
    tag: 'semaphores',
    operationId: 'listSemaphores',
    summary: 'Admin: list held semaphores with each hold (SCAN-based, paginated; never a token)',
    schema: semaphoreListSchema,
    view: (key, state) => [semaphoreView(key, state)],
  })
}
