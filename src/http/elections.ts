import { performance } from 'node:perf_hooks'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Config } from '../config.js'
import { fail, retryAfterSeconds, ServiceError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import {
  catchUp,
  isNewer,
  isOlder,
  notBefore,
  type ElectionFeeds,
  type FeedEvent,
  type Observed,
  type Seen,
} from '../locks/election-feeds.js'
import type { ElectionState, Elections } from '../locks/elections.js'
import type { LockEngine } from '../locks/engine.js'
import { isoTime } from '../locks/iso-time.js'
import type { Observed as ObservedOps } from '../locks/observe.js'
import type { SessionEngine } from '../locks/sessions.js'
import type { AcquireRequest } from '../locks/types.js'
import type { Watchers } from '../locks/watch.js'
import { authorizeAdmin, authorizeKey } from './auth.js'
import { sendError } from './errors.js'
import { clientGone } from './holds.js'
import { noQuery, tokenHeaders } from './schemas/common.js'
import {
  campaignSchemas,
  electionListSchema,
  electionParams,
  electionStateSchema,
  leadershipSchema,
  observedSchema,
  observeSchemas,
  proclaimedSchema,
  proclaimSchemas,
  renewedLeadershipSchema,
  renewLeadershipSchemas,
  resignedSchema,
  resignSchemas,
} from './schemas/elections.js'
import { errorResponses } from './schemas/errors.js'
import { listQuery } from './schemas/listing.js'
import { watchResultSchema, watchSchemas } from './schemas/watch.js'
import { sessionOwnerKey } from './sessions.js'
import { newToken, oneOf, requireToken } from './tokens.js'
import { answerWatch, DEFAULT_WATCH_MS, HEARTBEAT_MS } from './watch.js'
import { answerable } from './late-grant.js'

export interface ElectionRoutesOptions {
  config: Config
  engine: LockEngine
  sessions: SessionEngine
  observed: ObservedOps
  elections: Elections
  feeds: ElectionFeeds
  watchers: Watchers
  metrics: Metrics
}

/** What GET shows of an election (never a token). */
function stateView(name: string, state: ElectionState) {
  const leader = state.leader
  return {
    name,
    leader: leader
      ? {
          candidate: leader.candidate,
          value: leader.value === '' ? null : leader.value,
          term: leader.term,
          revision: leader.revision,
          since: isoTime(leader.sinceMs),
          remainingMs: leader.remainingMs,
        }
      : null,
    term: state.term,
    candidates: state.candidates,
    transitions: state.transitions,
  }
}

/** A long poll's answer, or an event stream's `resync`. */
function observedView(name: string, state: Observed, changed: boolean) {
  return {
    name,
    term: state.term,
    revision: state.revision,
    leader: state.leader,
    ...(state.reason ? { reason: state.reason } : {}),
    changed,
  }
}

/** One event of an observer's stream: its name and data. */
function eventData(e: FeedEvent): object {
  const { state } = e
  const leader = state.leader
  switch (e.event) {
    case 'elected':
      return {
        term: state.term,
        revision: state.revision,
        candidate: leader?.candidate,
        value: leader?.value ?? null,
        since: leader?.since,
      }
    case 'proclaimed':
      return { term: state.term, revision: state.revision, value: leader?.value ?? null }
    case 'vacant':
      return { term: state.term, revision: 0, ...(state.reason ? { reason: state.reason } : {}) }
    case 'resync':
      return { term: state.term, revision: state.revision, leader, ...(state.reason ? { reason: state.reason } : {}) }
  }
}

/** The first event of a stream: the state as it is (elected, or vacant). */
function currentEvent(state: Observed): FeedEvent {
  return { event: state.leader ? 'elected' : 'vacant', state }
}

/**
 * /elections/:name — leader election. Leadership is an exclusive hold in a namespace of its own
 * (the lock engine's acquire, renew, release and force-release with mode `leader`: the line,
 * hand-off, sessions and the vote rule come with it), its fence the term; src/locks/elections.ts
 * keeps each term's record (candidate, value, start, revision) and src/locks/election-feeds.ts the
 * observers.
 */
export async function electionRoutes(fastify: FastifyInstance, options: ElectionRoutesOptions): Promise<void> {
  const { config, engine, sessions, observed, elections, feeds, watchers, metrics } = options
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const campaign = campaignSchemas(config)
  const renew = renewLeadershipSchemas(config)
  const observe = observeSchemas(config)
  const watch = watchSchemas(config)
  const waitOf = (wait: number | undefined) => wait ?? Math.min(DEFAULT_WATCH_MS, config.maxWatchMs)

  app.post('/elections/:name/campaign', {
    schema: {
      summary: 'Campaign for leadership: 201 once leader (waiting in line up to waitMs), 200 for the leader re-campaigning with its token',
      operationId: 'campaign',
      tags: ['elections'],
      params: electionParams,
      querystring: campaign.querystring,
      headers: tokenHeaders,
      body: campaign.body,
      response: {
        201: leadershipSchema.describe('Elected: a new term'),
        200: leadershipSchema.describe("The leader's own token again: the same term"),
        ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429, 503]),
      },
    },
    handler: async (request, reply) => {
      const name = request.params.name
      authorizeKey(request, name)
      const body = request.body ?? {}
      const query = request.query
      const candidate = oneOf('candidate', query.candidate, body.candidate)
      if (candidate === undefined) {
        throw fail.invalid('a candidate label is required: ?candidate= or a candidate field', [{ path: 'candidate', message: 'required' }])
      }
      const value = oneOf('value', query.value, body.value) ?? ''
      const askedTtl = oneOf('ttl', query.ttl, body.ttlMs)
      const token = oneOf('token', request.headers['lock-token'], body.token) ?? newToken()
      const waitMs = oneOf('wait', query.wait, body.waitMs) ?? 0
      const session = oneOf('session', query.session, body.session)
      const req: AcquireRequest = {
        mode: 'leader',
        key: name,
        token,
        ttlMs: askedTtl ?? config.defaultTtlMs,
        keepTtl: askedTtl === undefined,
        reentrant: false,
        waitMs,
        clientGone: waitMs > 0 ? clientGone(reply.raw) : undefined,
        owner: candidate,
      }
      const started = performance.now()
      const outcome = await observed
        .acquire('leader', () =>
          session === undefined ? engine.acquire(req) : sessions.acquire(sessionOwnerKey(request), session, req, askedTtl),
        )
        .catch((err: unknown) => (err instanceof ServiceError ? err : Promise.reject(err)))
      if (waitMs > 0) {
        const result = outcome instanceof ServiceError ? (outcome.code === 'lock_held' ? 'timeout' : 'cancelled') : 'elected'
        metrics.campaignWait.observe({ outcome: result }, (performance.now() - started) / 1000)
      }
      if (outcome instanceof ServiceError) {
        if (outcome.code !== 'lock_held') throw outcome
        const leader = await elections.state(name).then(
          (s) => (s.leader ? { candidate: s.leader.candidate, term: s.leader.term, since: isoTime(s.leader.sinceMs) } : null),
          () => undefined,
        )
        return sendError(reply, leader === undefined ? outcome : fail.withDetails(outcome, { leader }))
      }
      let record
      try {
        record = await elections.stamp(name, token, value, Date.parse(outcome.expiresAt) - outcome.ttlMs)
      } catch (err) {
        // A leader nobody can be told of is no leader: its term ends (a re-campaign with the token starts another).
        if (!outcome.regranted) await engine.release({ mode: 'leader', key: name, token }).catch(() => undefined)
        throw err
      }
      // The validity left now (stamping the record took some): none left, the term ends here, a 503.
      const answer = answerable(outcome, { metrics, release: () => engine.release({ mode: 'leader', key: name, token }) })
      if (answer instanceof ServiceError) return sendError(reply, answer)
      if (!outcome.regranted) metrics.leadersElected.inc()
      return reply.code(outcome.regranted ? 200 : 201).send({
        name,
        term: outcome.fence,
        token,
        candidate,
        value: record.value === '' ? null : record.value,
        revision: record.revision,
        since: isoTime(record.sinceMs),
        ttlMs: outcome.ttlMs,
        validityMs: answer.validityMs,
        expiresAt: outcome.expiresAt,
      })
    },
  })

  app.put('/elections/:name/proclaim', {
    schema: {
      summary: "Proclaim a new value (the leader only): observers are told of it as the term's next revision",
      operationId: 'proclaim',
      tags: ['elections'],
      params: electionParams,
      querystring: proclaimSchemas.querystring,
      headers: tokenHeaders,
      body: proclaimSchemas.body,
      response: { 200: proclaimedSchema, ...errorResponses([400, 401, 403, 404, 409, 413, 415, 503]) },
    },
    handler: async (request) => {
      const name = request.params.name
      authorizeKey(request, name)
      const token = requireToken(oneOf('token', request.headers['lock-token'], request.body.token))
      const record = await elections.proclaim(name, token, request.body.value)
      return { name, term: record.term, revision: record.revision, value: record.value }
    },
  })

  app.put('/elections/:name/renew', {
    schema: {
      summary: 'Extend the leadership (the leader only; a session-bound leader is renewed by its keepalive)',
      operationId: 'renewLeadership',
      tags: ['elections'],
      params: electionParams,
      querystring: renew.querystring,
      headers: tokenHeaders,
      body: renew.body,
      response: { 200: renewedLeadershipSchema, ...errorResponses([400, 401, 403, 404, 409, 413, 415, 503]) },
    },
    handler: async (request) => {
      const name = request.params.name
      authorizeKey(request, name)
      const body = request.body ?? {}
      const token = requireToken(oneOf('token', request.headers['lock-token'], body.token))
      const ttlMs = oneOf('ttl', request.query.ttl, body.ttlMs)
      const renewed = await observed.renew('leader', () => engine.renew({ mode: 'leader', key: name, token, ttlMs }))
      const grant = answerable(renewed, { metrics, release: async () => undefined })
      if (grant instanceof ServiceError) throw grant
      return { name, term: grant.fence, token, ttlMs: grant.ttlMs, validityMs: grant.validityMs, expiresAt: grant.expiresAt }
    },
  })

  app.delete('/elections/:name', {
    schema: {
      summary: 'Resign (by the leader token): the term ends and the next candidate in line is elected',
      operationId: 'resign',
      tags: ['elections'],
      params: electionParams,
      querystring: resignSchemas.querystring,
      headers: tokenHeaders,
      body: resignSchemas.body,
      response: { 200: resignedSchema, ...errorResponses([400, 401, 403, 404, 409, 413, 415, 503]) },
    },
    handler: async (request) => {
      const name = request.params.name
      authorizeKey(request, name)
      if (request.query.force) {
        authorizeAdmin(request, 'force-release', { election: name })
        await observed.release('leader', () => engine.forceRelease('leader', name, undefined))
        metrics.electionVacancies.inc({ reason: 'force_released' })
        return { name, resigned: true as const }
      }
      const token = requireToken(oneOf('token', request.headers['lock-token'], request.body?.token, request.query.token))
      await observed.release('leader', () => engine.release({ mode: 'leader', key: name, token }))
      metrics.electionVacancies.inc({ reason: 'resigned' })
      return { name, resigned: true as const }
    },
  })

  app.get('/elections/:name', {
    schema: {
      summary: 'Inspect an election: its leader (never a token), candidates in line, terms begun',
      operationId: 'inspectElection',
      tags: ['elections'],
      params: electionParams,
      querystring: noQuery,
      response: { 200: electionStateSchema, ...errorResponses([400, 401, 403, 404, 503]) },
    },
    handler: async (request) => {
      const name = request.params.name
      authorizeKey(request, name)
      return stateView(name, await elections.inspect(name))
    },
  })

  app.get('/elections', {
    schema: {
      summary: 'Admin: list elections that have a leader (SCAN-based, paginated; never a token)',
      operationId: 'listElections',
      tags: ['elections'],
      querystring: listQuery,
      response: { 200: electionListSchema, ...errorResponses([400, 401, 403, 503]) },
    },
    handler: async (request) => {
      const { prefix = '', limit = 100, cursor } = request.query
      authorizeAdmin(request, 'list', { namespace: 'elections', prefix })
      const page = await engine.list('elect', prefix, limit, cursor)
      const items = await Promise.all(page.keys.map(async ({ key }) => stateView(key, await elections.state(key))))
      return { items, cursor: page.cursor }
    },
  })

  app.get('/elections/:name/observe', {
    schema: {
      summary: 'Observe an election: long poll (answers when the state differs from after/revision) or Server-Sent Events',
      operationId: 'observeElection',
      tags: ['elections'],
      params: electionParams,
      querystring: observe.querystring,
      headers: observe.headers,
      response: { 200: observedSchema, ...errorResponses([400, 401, 403, 429, 503]) },
    },
    handler: async (request, reply) => {
      const name = request.params.name
      authorizeKey(request, name)
      const { after, revision } = request.query
      const waitMs = waitOf(request.query.wait)
      const gone = clientGone(reply.raw)
      if (!/text\/event-stream/i.test(request.headers.accept ?? '')) {
        const answer = await feeds.observe(name, after, revision, waitMs, gone)
        return observedView(name, answer.state, answer.changed)
      }
      const lastEventId = /^(\d{1,16})\.(\d{1,16})$/.exec(request.headers['last-event-id'] ?? '')
      const seen: Seen | undefined =
        after !== undefined
          ? { after, ...(revision === undefined ? {} : { revision }) }
          : lastEventId
            ? { after: Number(lastEventId[1]), revision: Number(lastEventId[2]) }
            : undefined
      await streamEvents(request, reply, feeds, name, waitMs, seen)
      return reply
    },
  })

  app.get('/elections/:name/watch', {
    schema: {
      summary: "Watch the leader's own hold: answers as soon as the leadership is lost (why, when), or when the wait runs out",
      operationId: 'watchLeadership',
      tags: ['elections'],
      params: electionParams,
      querystring: watch.hold,
      headers: tokenHeaders,
      response: { 200: watchResultSchema, ...errorResponses([400, 401, 403, 404, 409, 429, 503]) },
    },
    handler: async (request, reply) => {
      const name = request.params.name
      authorizeKey(request, name)
      const token = requireToken(oneOf('token', request.headers['lock-token'], request.query.token))
      const gone = clientGone(reply.raw)
      return answerWatch(request, reply, (onHeld) => watchers.watchHold('leader', name, token, waitOf(request.query.wait), gone, onHeld))
    },
  })
}

/**
 * An observer's event stream: the state as it is first (elected or vacant), then each change, until
 * the wait runs out or the client hangs up; never an event older than one sent, or than what the
 * observer saw (`seen`: after and revision, or Last-Event-ID, from another replica perhaps). A refusal
 * before the first event (the backend cannot answer, too many observers, this replica is behind what
 * the observer saw and cannot look) is answered with its status and JSON body, as for a long poll.
 */
async function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  feeds: ElectionFeeds,
  name: string,
  waitMs: number,
  seen: Seen | undefined,
): Promise<void> {
  const raw = reply.raw
  reply.hijack()
  let started = false
  let heartbeat: NodeJS.Timeout | undefined
  // What the observer has been told (or, given after or Last-Event-ID, saw): nothing older is sent.
  let told = seen
  // Changes before the first event are in the state it shows: never sent after it (an older term).
  const send = (e: FeedEvent) => {
    if (!started) return
    const state = notBefore(e.state, told)
    if (e.event !== 'resync' && !isNewer(state, told)) return
    told = { after: state.term, revision: state.leader ? state.revision : 0 }
    raw.write(`event: ${e.event}\nid: ${state.term}.${state.revision}\ndata: ${JSON.stringify(eventData({ ...e, state }))}\n\n`)
  }
  let status = 200
  let stop: (() => void) | undefined
  let end: (() => void) | undefined
  const done = new Promise<void>((resolve) => (end = resolve))
  raw.once('close', () => end?.())
  try {
    const following = await feeds.follow(name, send)
    stop = following.stop
    if (seen && isOlder(following.feed.state as Observed, seen)) await catchUp(following.feed)
    raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': request.id,
    })
    heartbeat = setInterval(() => raw.write(': still observing\n\n'), HEARTBEAT_MS)
    started = true
    const first = currentEvent(notBefore(following.feed.state as Observed, seen))
    told = undefined
    send(first)
    const timer = setTimeout(() => end?.(), waitMs)
    const parked = () => end?.()
    feeds.onStop(parked)
    await done
    clearTimeout(timer)
    feeds.offStop(parked)
  } catch (err) {
    const error = err instanceof ServiceError ? err : new ServiceError('internal_error', 'the observe failed')
    status = error.status
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': request.id }
    if (error.retryAfterMs !== undefined) headers['retry-after'] = String(retryAfterSeconds(error.retryAfterMs))
    if (!raw.headersSent) raw.writeHead(status, headers)
    raw.write(JSON.stringify(error.body()))
  } finally {
    stop?.()
    clearInterval(heartbeat)
    raw.end()
  }
  request.log.info({ req: request, res: { statusCode: status }, stream: true }, 'request completed')
}
