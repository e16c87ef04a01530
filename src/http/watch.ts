import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Config } from '../config.js'
import type { HoldResource } from '../contract/words.js'
import { retryAfterSeconds, ServiceError } from '../errors.js'
import type { LockMode } from '../locks/types.js'
import type { WatchResult, Watchers } from '../locks/watch.js'
import { authorizeKey } from './auth.js'
import { clientGone } from './holds.js'
import { keyParams, tokenHeaders } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { sessionParams } from './schemas/sessions.js'
import { watchResultSchema, watchSchemas } from './schemas/watch.js'
import { sessionOwnerKey } from './sessions.js'
import { oneOf, requireToken } from './tokens.js'

export interface WatchRoutesOptions {
  config: Config
  watchers: Watchers
}

/** The default wait of a watch, when MAX_WATCH_MS allows it. */
export const DEFAULT_WATCH_MS = 30_000
/** A comment line on an idle event stream, so proxies keep it open. */
export const HEARTBEAT_MS = 15_000

type Watch = (onHeld?: (remainingMs: number) => void) => Promise<WatchResult>

/**
 * GET …/watch: the lost-lock signal, as a long poll (JSON) or, with `Accept: text/event-stream`, as
 * Server-Sent Events: `held` ({ held: true, remainingMs }) at once and after each renewal is seen,
 * then `lost` ({ held: false, reason, at }) and the end of the stream, or the end of the stream when
 * the wait runs out; `error` (the JSON error) if the backend fails meanwhile. A watch refused at its
 * first look (the token holds nothing there, the backend cannot answer) gets its error's status and
 * JSON body, as the long poll does: the stream only starts with the first event.
 */
export async function answerWatch(request: FastifyRequest, reply: FastifyReply, watch: Watch): Promise<WatchResult | undefined> {
  if (!/text\/event-stream/i.test(request.headers.accept ?? '')) return watch()
  const raw = reply.raw
  reply.hijack()
  let heartbeat: NodeJS.Timeout | undefined
  const start = () => {
    if (heartbeat) return
    raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': request.id,
    })
    heartbeat = setInterval(() => raw.write(': still watching\n\n'), HEARTBEAT_MS)
  }
  const send = (event: string, data: object) => {
    start()
    raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  let status = 200
  try {
    const result = await watch((remainingMs) => send('held', { held: true, remainingMs }))
    send(result.held ? 'held' : 'lost', result)
  } catch (err) {
    const error = err instanceof ServiceError ? err : new ServiceError('internal_error', 'the watch failed')
    if (error.code === 'client_gone') {
      // nobody to answer
    } else if (heartbeat) {
      send('error', error.body())
    } else {
      status = error.status
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': request.id }
      if (error.retryAfterMs !== undefined) headers['retry-after'] = String(retryAfterSeconds(error.retryAfterMs))
      raw.writeHead(status, headers)
      raw.write(JSON.stringify(error.body()))
    }
  } finally {
    clearInterval(heartbeat)
    raw.end()
  }
  request.log.info({ req: request, res: { statusCode: status }, stream: true }, 'request completed')
  return undefined
}

/** GET /locks/:key/watch, /rwlocks/:key/{read,write}/watch, /semaphores/:key/watch, /sessions/:id/watch. */
export async function watchRoutes(fastify: FastifyInstance, { config, watchers }: WatchRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const schemas = watchSchemas(config)
  const waitOf = (wait: number | undefined) => wait ?? Math.min(DEFAULT_WATCH_MS, config.maxWatchMs)
  const holds: [string, LockMode, HoldResource, string][] = [
    ['/locks/:key/watch', 'exclusive', 'locks', 'watchLock'],
    ['/rwlocks/:key/read/watch', 'read', 'rwlocks', 'watchReadHold'],
    ['/rwlocks/:key/write/watch', 'write', 'rwlocks', 'watchWriteHold'],
    ['/semaphores/:key/watch', 'permit', 'semaphores', 'watchPermit'],
  ]
  for (const [path, mode, tag, operationId] of holds) {
    app.get(path, {
      schema: {
        summary: 'Watch a hold: answers as soon as it is gone (why, when), or when the wait runs out (long poll, or SSE)',
        operationId,
        tags: [tag],
        params: keyParams,
        querystring: schemas.hold,
        headers: tokenHeaders,
        response: { 200: watchResultSchema, ...errorResponses([400, 401, 403, 404, 409, 429, 503]) },
      },
      handler: async (request, reply) => {
        const key = request.params.key
        authorizeKey(request, key)
        const token = requireToken(oneOf('token', request.headers['lock-token'], request.query.token))
        const gone = clientGone(reply.raw)
        return answerWatch(request, reply, (onHeld) => watchers.watchHold(mode, key, token, waitOf(request.query.wait), gone, onHeld))
      },
    })
  }
  app.get('/sessions/:id/watch', {
    schema: {
      summary: 'Watch a session: answers as soon as it is closed or lapses, or when the wait runs out (long poll, or SSE)',
      operationId: 'watchSession',
      tags: ['sessions'],
      params: sessionParams,
      querystring: schemas.session,
      response: { 200: watchResultSchema, ...errorResponses([400, 401, 429, 503]) },
    },
    handler: async (request, reply) => {
      const gone = clientGone(reply.raw)
      return answerWatch(request, reply, (onHeld) =>
        watchers.watchSession(sessionOwnerKey(request), request.params.id, waitOf(request.query.wait), gone, onHeld),
      )
    },
  })
}
