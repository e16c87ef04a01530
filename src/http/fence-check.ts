import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { HoldResource } from '../contract/words.js'
import type { LockEngine } from '../locks/engine.js'
import type { Namespace } from '../locks/keys.js'
import { authorizeKey } from './auth.js'
import { noQuery } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { fenceCheckParams, fenceCheckSchema, termCheckParams } from './schemas/fence-check.js'

/**
 * GET /locks/:key/fence/:fence, /rwlocks/…, /semaphores/…, /elections/:name/fence/:fence (a term):
 * Chubby's CheckSequencer, for a resource that cannot store the highest fence it has seen. A read:
 * read-only API keys may call it.
 */
export async function fenceCheckRoutes(fastify: FastifyInstance, { engine }: { engine: LockEngine }): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const checks: [string, Namespace, HoldResource, string, string][] = [
    ['/locks/:key/fence/:fence', 'lock', 'locks', 'checkLockFence', 'the lock'],
    ['/rwlocks/:key/fence/:fence', 'rw', 'rwlocks', 'checkRwLockFence', 'a read or write hold'],
    ['/semaphores/:key/fence/:fence', 'sem', 'semaphores', 'checkSemaphoreFence', 'a permit hold'],
  ]
  for (const [path, namespace, tag, operationId, what] of checks) {
    app.get(path, {
      schema: {
        summary: `Check a fence: is it ${what}'s live fence now? (for resources that cannot store the highest fence)`,
        operationId,
        tags: [tag],
        params: fenceCheckParams,
        querystring: noQuery,
        response: { 200: fenceCheckSchema, ...errorResponses([400, 401, 403, 503]) },
      },
      handler: async (request) => {
        const { key, fence } = request.params
        authorizeKey(request, key)
        return engine.checkFence(namespace, key, fence)
      },
    })
  }
  // An election's leader holds a write hold in its own namespace; its fence is the term.
  app.get('/elections/:name/fence/:fence', {
    schema: {
      summary: "Check a term: is it the current leader's? (for resources that cannot store the highest term)",
      operationId: 'checkElectionTerm',
      tags: ['elections'],
      params: termCheckParams,
      querystring: noQuery,
      response: { 200: fenceCheckSchema, ...errorResponses([400, 401, 403, 503]) },
    },
    handler: async (request) => {
      const { name, fence } = request.params
      authorizeKey(request, name)
      return engine.checkFence('elect', name, fence)
    },
  })
}
