import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { fail, type ServiceError } from '../errors.js'
import { keyParams, noQuery } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { lockListSchema, lockStateSchema, rwInspectQuery, rwLockListSchema, rwLockStateSchema } from './schemas/locks.js'
import { authorizeAdmin, authorizeKey } from './auth.js'
import type { LockState } from '../locks/types.js'
import { registerHoldRoutes, type HoldRoutesOptions } from './holds.js'
import { registerListing } from './listing.js'

/** /locks/:key — exclusive locks. */
export async function lockRoutes(fastify: FastifyInstance, options: HoldRoutesOptions): Promise<void> {
  registerHoldRoutes(fastify, options, '/locks/:key', 'exclusive', 'locks')

  fastify.withTypeProvider<ZodTypeProvider>().get('/locks/:key', {
    schema: {
      summary: 'Inspect a lock (never shows the token)',
      operationId: 'inspectLock',
      tags: ['locks'],
      params: keyParams,
      querystring: noQuery,
      response: { 200: lockStateSchema.describe('Held'), ...errorResponses([400, 401, 403, 404, 503]) },
    },
    handler: async (request) => {
      const key = request.params.key
      authorizeKey(request, key)
      const state = await options.engine.inspect('lock', key)
      if (!state.writer) throw notHeld(key, `lock "${key}" is not held`, state)
      return exclusiveView(key, state.writer, state)
    },
  })

  registerListing(fastify, options.engine, {
    path: '/locks',
    namespace: 'lock',
    tag: 'locks',
    operationId: 'listLocks',
    summary: 'Admin: list held locks (SCAN-based, paginated; never a token)',
    schema: lockListSchema,
    view: (key, state) => (state.writer ? [exclusiveView(key, state.writer, state)] : []),
  })
}

function exclusiveView(key: string, writer: NonNullable<LockState['writer']>, state: LockState) {
  return { key, mode: 'exclusive' as const, ...writer, waiters: state.waiters, ...ownerOf(state, writer.fence), ...delayOf(state) }
}

/** `{ delayedUntil }` while a lock-delay runs (a majority says so); else nothing. */
export function delayOf(state: LockState): { delayedUntil?: string } {
  return state.delayedMs > 0 ? { delayedUntil: new Date(Date.now() + state.delayedMs).toISOString() } : {}
}

/** Inspect's 404: nothing is held; while a lock-delay runs, it says until when. */
export function notHeld(key: string, message: string, state: LockState): ServiceError {
  const delay = delayOf(state)
  if (!delay.delayedUntil) return fail.notFound(key, message)
  return fail.withDetails(fail.notFound(key, `${message}; its lock-delay runs until ${delay.delayedUntil}`), delay)
}

function rwView(key: string, state: LockState) {
  return {
    key,
    writer: state.writer
      ? { fence: state.writer.fence, remainingMs: state.writer.remainingMs, ...ownerOf(state, state.writer.fence) }
      : null,
    readers: state.readers,
    ...(state.readerHolds
      ? { readerHolds: state.readerHolds.map(({ permits: _permits, ...hold }) => ({ ...hold, ...ownerOf(state, hold.fence) })) }
      : {}),
    writerWaiting: state.writerWaiting,
    waiters: state.waiters,
    ...ownersOf(state),
    ...delayOf(state),
  }
}

/** `{ owners }`: the owner labels of the live holds, when any has one (at most 10); else nothing. */
export function ownersOf(state: LockState): { owners?: string[] } {
  return state.owners.length > 0 ? { owners: state.owners.map((o) => o.owner) } : {}
}

/** `{ owner }` of the hold with this fence, when it has an owner label; else nothing. */
export function ownerOf(state: LockState, fence: number): { owner?: string } {
  const found = state.owners.find((o) => o.fence === fence)
  return found ? { owner: found.owner } : {}
}

/** /rwlocks/:key — shared (read) and exclusive (write) holds on one lock. */
export async function rwlockRoutes(fastify: FastifyInstance, options: HoldRoutesOptions): Promise<void> {
  registerHoldRoutes(fastify, options, '/rwlocks/:key/read', 'read', 'rwlocks')
  registerHoldRoutes(fastify, options, '/rwlocks/:key/write', 'write', 'rwlocks')

  fastify.withTypeProvider<ZodTypeProvider>().get('/rwlocks/:key', {
    schema: {
      summary: 'Inspect a read-write lock: writer, reader count, waiting writer, fence (never a token)',
      operationId: 'inspectRwLock',
      tags: ['rwlocks'],
      params: keyParams,
      querystring: rwInspectQuery,
      response: { 200: rwLockStateSchema.describe('Held by a writer or by readers'), ...errorResponses([400, 401, 403, 404, 503]) },
    },
    handler: async (request) => {
      const key = request.params.key
      authorizeKey(request, key)
      if (request.query.readers) authorizeAdmin(request, 'inspect read holds', { key })
      const state = await options.engine.inspect('rw', key, request.query.readers === true)
      if (!state.writer && state.readers === 0) throw notHeld(key, `read-write lock "${key}" is not held`, state)
      return rwView(key, state)
    },
  })

  registerListing(fastify, options.engine, {
    path: '/rwlocks',
    namespace: 'rw',
    tag: 'rwlocks',
    operationId: 'listRwLocks',
    summary: 'Admin: list held read-write locks (SCAN-based, paginated; never a token)',
    schema: rwLockListSchema,
    view: (key, state) => [rwView(key, state)],
  })
}
