import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import type { HoldResource } from '../contract/words.js'
import type { LockEngine } from '../locks/engine.js'
import type { Namespace } from '../locks/keys.js'
import type { LockState } from '../locks/types.js'
import { authorizeAdmin } from './auth.js'
import { errorResponses } from './schemas/errors.js'
import { listQuery } from './schemas/listing.js'

interface Listing<Item> {
  /** `/locks`, `/rwlocks`, `/semaphores` */
  path: string
  namespace: Namespace
  tag: HoldResource
  operationId: string
  summary: string
  /** The page's schema: `{ items: Item[], cursor }`. */
  schema: z.ZodType<{ items: Item[]; cursor: string | null }>
  /** One listed key as the route shows it; none when it is not held in this route's sense. */
  view(key: string, state: LockState): Item[]
}

/**
 * Admin: `GET <path>?prefix=&limit=&cursor=`, a page of one namespace's held keys (SCAN-based, see
 * src/locks/listing.ts; never a token), each shown by `view`.
 */
export function registerListing<Item>(fastify: FastifyInstance, engine: LockEngine, listing: Listing<Item>): void {
  fastify.withTypeProvider<ZodTypeProvider>().get(listing.path, {
    schema: {
      summary: listing.summary,
      operationId: listing.operationId,
      tags: [listing.tag],
      querystring: listQuery,
      response: { 200: listing.schema, ...errorResponses([400, 401, 403, 503]) },
    },
    handler: async (request) => {
      const { prefix = '', limit = 100, cursor } = request.query
      authorizeAdmin(request, 'list', { namespace: listing.path.slice(1), prefix })
      const page = await engine.list(listing.namespace, prefix, limit, cursor)
      return { items: page.keys.flatMap(({ key, state }) => listing.view(key, state)), cursor: page.cursor }
    },
  })
}
