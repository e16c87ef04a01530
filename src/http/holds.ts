import type { ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import type { Config } from '../config.js'
import type { HoldResource } from '../contract/words.js'
import type { LockEngine } from '../locks/engine.js'
import type { SessionEngine } from '../locks/sessions.js'
import { sessionOwnerKey } from './sessions.js'
import type { Observed } from '../locks/observe.js'
import { ClientGone, type Grant, type LockMode, type Permits } from '../locks/types.js'
import { keyParams, tokenHeaders } from './schemas/common.js'
import { errorResponses } from './schemas/errors.js'
import { acquireSchemas, grantSchema, releaseResultSchema, releaseSchemas, renewSchemas } from './schemas/holds.js'
import { permitGrantSchema, semaphoreAcquireSchemas } from './schemas/semaphores.js'
import { newToken, oneOf, requireToken } from './tokens.js'
import { authorizeAdmin, authorizeKey } from './auth.js'
import { fail, ServiceError } from '../errors.js'
import { sendError } from './errors.js'
import { tooLate, validityLeft, type LateGrantOptions } from './late-grant.js'
import type { Metrics } from '../metrics.js'

export interface HoldRoutesOptions {
  config: Config
  engine: LockEngine
  sessions: SessionEngine
  observed: Observed
  metrics: Pick<Metrics, 'grantsAnsweredLate'>
}

const goneOf = Symbol('clientGone')
type Watched = ServerResponse & { [goneOf]?: ClientGone }

/** 'close' fires once; `this` is the response. One function for every request: no closure per parked request. */
function onClose(this: Watched): void {
  if (!this.writableFinished) this[goneOf]?.notify()
}

/** Told when the client hangs up before its answer is sent. */
export function clientGone(response: ServerResponse): ClientGone {
  const gone = new ClientGone()
  ;(response as Watched)[goneOf] = gone
  response.on('close', onClose)
  return gone
}

type GrantWire = z.output<typeof grantSchema> | z.output<typeof permitGrantSchema>

/**
 * The wire shape of a grant: the engine's Grant less its internal flags, with the validity left when
 * it is sent. Field by field in grantOf's order (a rest copy and a spread cost every grant two copies).
 */
function grantBody(grant: Grant, validityMs: number): GrantWire {
  const { key, mode, token, fence, ttlMs, expiresAt, holdCount, permits, limit } = grant
  // A semaphore's grant carries its permits and limit (grantOf sets both for mode 'permit').
  if (permits === undefined) return { key, mode, token, fence, ttlMs, validityMs, expiresAt, holdCount } as GrantWire
  return { key, mode, token, fence, ttlMs, validityMs, expiresAt, holdCount, permits, limit } as GrantWire
}

/**
 * Sends a grant with the validity it has left now; one with none left is answered as tooLate says
 * (`release` is made only then).
 */
function sendGrant(reply: FastifyReply, grant: Grant, status: number, late: () => LateGrantOptions): void {
  const now = performance.now()
  const left = validityLeft(grant, now)
  if (left > 0) reply.code(status).send(grantBody(grant, left))
  else sendError(reply, tooLate(grant, now, late()))
}

type AskedPermits = { limit?: number; permits?: number }

/**
 * A semaphore's limit and the permits asked for, each given as a query parameter or a body field
 * (both already validated by the route's schemas; given both ways, they must agree).
 */
function permitsOf(query: object, body: object): Permits {
  const inQuery = query as AskedPermits
  const inBody = body as AskedPermits
  const limit = oneOf('limit', inQuery.limit, inBody.limit)
  if (limit === undefined) {
    throw fail.invalid("a semaphore's limit is required: ?limit=N or a limit field (1 … MAX_SEMAPHORE_LIMIT)", [
      { path: 'limit', message: 'required' },
    ])
  }
  const permits = oneOf('permits', inQuery.permits, inBody.permits) ?? 1
  if (permits > limit) {
    throw fail.invalid(`permits (${permits}) must not exceed the limit (${limit})`, [
      { path: 'permits', message: `at most the limit, ${limit}` },
    ])
  }
  return { permits, limit }
}

/**
 * Acquire (POST path), renew (PUT path/renew) and release (DELETE path) of one kind of hold:
 * `/locks/:key` (exclusive), `/rwlocks/:key/read`, `/rwlocks/:key/write`, `/semaphores/:key`
 * (permits). Same bodies, query parameters, token rules and status codes for all four; a
 * semaphore's acquire also takes its limit and the permits asked for.
 */
export function registerHoldRoutes(
  fastify: FastifyInstance,
  { config, engine, sessions, observed, metrics }: HoldRoutesOptions,
  path: string,
  mode: LockMode,
  tag: HoldResource,
): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const semaphore = mode === 'permit'
  const acquire = semaphore ? semaphoreAcquireSchemas(config) : acquireSchemas(config)
  const grant = semaphore ? permitGrantSchema : grantSchema
  const renew = renewSchemas(config)
  const what = {
    exclusive: 'an exclusive lock',
    read: 'a read hold',
    write: 'a write hold',
    permit: "a semaphore's permits",
    leader: "an election's leadership",
  }[mode]
  // Stable operation ids for client generators: acquireLock, renewReadHold, releaseWriteHold, acquirePermit, …
  const noun = { exclusive: 'Lock', read: 'ReadHold', write: 'WriteHold', permit: 'Permit', leader: 'Leadership' }[mode]
  // Force-releasing a hold that is one of several (a read hold, a semaphore's) names it by its fence.
  const byFence = mode === 'read' || semaphore

  app.post(path, {
    schema: {
      summary: `Acquire ${what}`,
      operationId: `acquire${noun}`,
      tags: [tag],
      params: keyParams,
      querystring: acquire.querystring,
      headers: tokenHeaders,
      body: acquire.body,
      response: {
        201: grant.describe('Granted: a new hold'),
        200: grant.describe('Re-granted to the token that already held it'),
        ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429, 503]),
      },
    },
    // Not async: a waiting acquire stays pending for up to MAX_WAIT_MS, and a .then costs a parked
    // request less memory than a suspended async frame (a throw before it Fastify answers alike).
    handler: (request, reply) => {
      authorizeKey(request, request.params.key)
      const body = request.body ?? {}
      const askedTtl = oneOf('ttl', request.query.ttl, body.ttlMs)
      const token = oneOf('token', request.headers['lock-token'], body.token) ?? newToken()
      const waitMs = oneOf('wait', request.query.wait, body.waitMs) ?? 0
      const permits = semaphore ? permitsOf(request.query, body) : undefined
      const session = oneOf('session', request.query.session, body.session)
      const req = {
        mode,
        key: request.params.key,
        token,
        ttlMs: askedTtl ?? config.defaultTtlMs,
        keepTtl: askedTtl === undefined,
        reentrant: body.reentrant ?? false,
        semaphore: permits,
        waitMs,
        clientGone: waitMs > 0 ? clientGone(reply.raw) : undefined,
        owner: oneOf('owner', request.query.owner, body.owner),
        // Undefined when not given: a session's acquire then takes the session's; 0 means none.
        lockDelayMs: oneOf('lockDelay', request.query.lockDelay, body.lockDelayMs),
      }
      // Bound to a session: its lease is the session's (sessions.ts), made by the same engine path.
      const run = () => (session === undefined ? engine.acquire(req) : sessions.acquire(sessionOwnerKey(request), session, req, askedTtl))
      // A refusal that came back as a value (409 lock_held on a contended lock: the hot path) is
      // answered as the error handler answers a thrown one.
      return observed.acquire(mode, run).then((outcome) => {
        if (outcome instanceof ServiceError) return void sendError(reply, outcome)
        // The validity left now; none left (this process was stopped or starved since): released, a 503.
        sendGrant(reply, outcome, outcome.regranted ? 200 : 201, () => ({
          metrics,
          release: () => engine.release({ mode, key: req.key, token }),
        }))
      })
    },
  })

  app.put(`${path}/renew`, {
    schema: {
      summary: `Extend ${what} (owner only)`,
      operationId: `renew${noun}`,
      tags: [tag],
      params: keyParams,
      querystring: renew.querystring,
      headers: tokenHeaders,
      body: renew.body,
      response: { 200: grant.describe('Renewed'), ...errorResponses([400, 401, 403, 404, 409, 413, 415, 503]) },
    },
    // Not async (nor the release's): an async function returning a promise costs a request a promise
    // and two microtasks more; a throw before it Fastify answers alike.
    handler: (request, reply) => {
      authorizeKey(request, request.params.key)
      const body = request.body ?? {}
      const token = requireToken(oneOf('token', request.headers['lock-token'], body.token))
      const ttlMs = oneOf('ttl', request.query.ttl, body.ttlMs)
      return observed
        .renew(mode, () => engine.renew({ mode, key: request.params.key, token, ttlMs }))
        .then((grant) => {
          // A renew answered too late is not released: the hold was the caller's before, it lapses by its TTL.
          sendGrant(reply, grant, 200, () => ({ metrics, release: async () => undefined }))
        })
    },
  })

  app.delete(path, {
    schema: {
      summary: `Release ${what} (owner only)`,
      operationId: `release${noun}`,
      tags: [tag],
      params: keyParams,
      querystring: releaseSchemas.querystring,
      headers: tokenHeaders,
      body: releaseSchemas.body,
      response: {
        200: releaseResultSchema.describe('Released, or one reentrant hold dropped'),
        ...errorResponses([400, 401, 403, 404, 409, 413, 415, 503]),
      },
    },
    handler: (request) => {
      const key = request.params.key
      authorizeKey(request, key)
      const { force, fence } = request.query
      if (force) {
        if (byFence && fence === undefined) {
          throw fail.invalid(`force-releasing ${what} needs the fence of that hold: ?force=true&fence=N`, [
            { path: 'querystring.fence', message: 'required with force' },
          ])
        }
        authorizeAdmin(request, 'force-release', { key, mode, fence })
        return observed.release(mode, () => engine.forceRelease(mode, key, fence))
      }
      if (fence !== undefined) throw fail.invalid('fence goes with force=true', [{ path: 'querystring.fence', message: 'only with force' }])
      const token = requireToken(oneOf('token', request.headers['lock-token'], request.body?.token, request.query.token))
      return observed.release(mode, () => engine.release({ mode, key, token }))
    },
  })
}
