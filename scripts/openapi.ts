import YAML from 'yaml'
import { buildApp } from '../src/app.js'
import { configFrom } from '../src/config.js'
import { errorCodesOf } from '../src/http/schemas/errors.js'

type Json = Record<string, unknown>

/**
 * The OpenAPI document, generated from the routes' zod schemas with the default limits (MAX_TTL_MS …).
 * `npm run openapi` writes it to openapi.yaml; a test fails when the two differ.
 */
export async function generateOpenapi(): Promise<string> {
  // No Redis is needed to describe the routes: an unreachable node, and no wait for it.
  const app = await buildApp(configFrom({ redisUrls: ['redis://127.0.0.1:1'], logLevel: 'silent', nodeTimeoutMs: 10 }), {
    documentation: true,
  })
  try {
    await app.ready()
    const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Json>>; components: Json }
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        optionalBody(operation)
        describeErrors(operation, path, method)
        if (path.endsWith('/watch')) declareEventStream(operation)
        if (path.endsWith('/observe')) declareObserveStream(operation)
        declareHeaders(operation)
      }
    }
    doc.components.headers = responseHeaders
    dropUnreferencedSchemas(doc as unknown as Json)
    withoutSafeIntegerBounds(doc)
    return `# Generated from the zod schemas in src/http by \`npm run openapi\`. Do not edit by hand.\n${YAML.stringify(doc, { lineWidth: 0 })}`
  } finally {
    await app.close()
  }
}

/** The zod transform also emits an input variant of each named schema; only the referenced ones stay. */
function dropUnreferencedSchemas(doc: Json): void {
  const schemas = (doc.components as { schemas?: Json } | undefined)?.schemas
  if (!schemas) return
  const text = JSON.stringify(doc.paths)
  for (const name of Object.keys(schemas)) if (!text.includes(`#/components/schemas/${name}"`)) delete schemas[name]
}

type Response = { description?: string; content?: Record<string, { schema?: Json }>; headers?: Json }
const ERROR_REF = '#/components/schemas/Error'
const isError = (response: Response) => Object.values(response.content ?? {}).some((media) => media.schema?.$ref === ERROR_REF)

/**
 * Error responses share one schema, always JSON (also on routes whose success is text); their
 * description names the error codes of the status. Other responses keep theirs (/readyz's 503 is
 * the readiness body).
 */
function describeErrors(operation: Json, path: string, method: string): void {
  const responses = operation.responses as Record<string, Response>
  for (const [status, response] of Object.entries(responses)) {
    if (!isError(response)) continue
    response.description = status === '429' ? tooManyCodes(path, method).join(' | ') : errorCodesOf(Number(status))
    response.content = { 'application/json': { schema: { $ref: ERROR_REF } } }
  }
}

/**
 * The 429 codes a route can answer: every limited route rate_limited (src/http/limits.ts), watches and
 * observes their limits, acquires and campaigns those of waiting in line and of sessions, POST /sessions its own.
 */
function tooManyCodes(path: string, method: string): string[] {
  if (/\/(watch|observe)$/.test(path)) return ['too_many_watchers', 'rate_limited', 'too_many_streams']
  if (method !== 'post') return ['rate_limited']
  if (path === '/sessions') return ['too_many_sessions', 'rate_limited']
  return ['too_many_waiters', ...(path === '/rwlocks/{key}/read' ? ['too_many_readers'] : []), 'too_many_holds', 'rate_limited']
}

/**
 * A watch answers JSON, or Server-Sent Events when asked with Accept: text/event-stream (src/http/watch.ts).
 * OpenAPI 3.1 has no schema for the items of a stream: the stream's schema is that of one event, `event` its
 * name and `data` its JSON, built from the JSON answer's fields so that the two cannot drift apart.
 */
function declareEventStream(operation: Json): void {
  const ok = (operation.responses as Record<string, Response>)['200']
  const answer = ok?.content?.['application/json']?.schema as { properties?: Record<string, Json> } | undefined
  // Copies: an object used twice would become a YAML anchor and alias.
  const { reason, at, remainingMs } = structuredClone(answer?.properties ?? {})
  if (!ok?.content || !reason || !at || !remainingMs)
    throw new Error(`${String(operation.operationId)}: a watch answers JSON { held, reason, at, remainingMs }`)
  const object = (properties: Json): Json => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  })
  const event = (name: string, description: string, data: Json): Json => ({
    title: name,
    description,
    ...object({
      event: { const: name, description: 'The event: line' },
      data: { ...data, description: 'The data: line, one JSON object' },
    }),
  })
  ok.content['text/event-stream'] = {
    schema: {
      description:
        'One event of the stream (with Accept: text/event-stream). Each event is an `event:` line and a `data:` line of JSON; ' +
        'a comment line (`: still watching`) every 15 s keeps proxies from closing an idle stream. The stream ends after `lost`, ' +
        'after `error`, or after a last `held` when the wait runs out.',
      oneOf: [
        event(
          'held',
          'Still held: at once, after each renewal seen, and last when the wait runs out',
          object({ held: { const: true }, remainingMs }),
        ),
        event('lost', 'Gone (why, when): the last event', object({ held: { const: false }, reason, at })),
        event('error', 'The watch could not go on (backend_unavailable, too_many_watchers, shutting_down …): the last event', {
          $ref: ERROR_REF,
        }),
      ],
    },
  }
}

/**
 * An election's observe answers JSON, or Server-Sent Events (src/http/elections.ts): elected, proclaimed,
 * vacant and resync, each with an `id:` line "<term>.<revision>"; their fields are the JSON answer's.
 */
function declareObserveStream(operation: Json): void {
  const ok = (operation.responses as Record<string, Response>)['200']
  const answer = ok?.content?.['application/json']?.schema as { properties?: Record<string, Json> } | undefined
  const fields = structuredClone(answer?.properties ?? {})
  const { term, revision, leader, reason } = fields
  const leaderFields = structuredClone(((leader?.anyOf as Json[] | undefined)?.[0]?.properties ?? {}) as Record<string, Json>)
  const { candidate, value, since } = leaderFields
  if (!ok?.content || !term || !revision || !leader || !reason || !candidate || !value || !since)
    throw new Error(
      `${String(operation.operationId)}: an observe answers JSON { term, revision, leader: { candidate, value, since }, reason }`,
    )
  const object = (properties: Json, optional: string[] = []): Json => ({
    type: 'object',
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
  })
  const event = (name: string, description: string, data: Json): Json => ({
    title: name,
    description,
    ...object({
      event: { const: name, description: 'The event: line' },
      id: { type: 'string', description: 'The id: line, "<term>.<revision>"' },
      data: { ...data, description: 'The data: line, one JSON object' },
    }),
  })
  const copy = (v: Json) => structuredClone(v)
  ok.content['text/event-stream'] = {
    schema: {
      description:
        'One event of the stream (with Accept: text/event-stream): an `event:`, an `id:` and a `data:` line of JSON. The first ' +
        'event is the state as it is (elected, or vacant); a comment line every 15 s keeps proxies from closing an idle stream; ' +
        'the stream ends when the wait runs out.',
      oneOf: [
        event(
          'elected',
          'A term began (or, first, the leader as it is)',
          object({ term: copy(term), revision: copy(revision), candidate: copy(candidate), value: copy(value), since: copy(since) }),
        ),
        event('proclaimed', "The leader's new value", object({ term: copy(term), revision: copy(revision), value: copy(value) })),
        event(
          'vacant',
          'Term `term` ended (or, first, there is no leader); reason when this replica saw it end',
          object({ term: copy(term), revision: { const: 0 }, reason: copy(reason) }, ['reason']),
        ),
        event(
          'resync',
          "The stream may have missed something: this state replaces the observer's",
          object({ term: copy(term), revision: copy(revision), leader: copy(leader), reason: copy(reason) }, ['reason']),
        ),
      ],
    },
  }
}

/** Headers the service sets: X-Request-Id on every answer, Retry-After on the answers worth retrying. */
const responseHeaders = {
  'X-Request-Id': {
    description:
      'The request id: the X-Request-Id the client sent (1–64 characters from A-Z a-z 0-9 . _ : -) or a new one, unique to the request; also in the log line of the request',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description:
      'Whole seconds (at least 1) to wait before retrying: with lock_held (when the holds lapse), too_many_waiters, backend_unavailable and shutting_down',
    schema: { type: 'integer', minimum: 1 },
  },
}
const RETRY_STATUSES = new Set(['409', '429', '503'])

function declareHeaders(operation: Json): void {
  for (const [status, response] of Object.entries(operation.responses as Record<string, Response>)) {
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }
    if (RETRY_STATUSES.has(status) && isError(response)) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' }
    response.headers = headers
  }
}

/** zod's .int() bounds every integer by ±(2^53 − 1): noise for readers and generators, dropped. */
function withoutSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(withoutSafeIntegerBounds)
    return
  }
  if (node === null || typeof node !== 'object') return
  const o = node as Json
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum
  for (const value of Object.values(o)) withoutSafeIntegerBounds(value)
}

/**
 * Bodies are optional everywhere (empty = all defaults). The schemas accept null only because fastify
 * hands a missing body to the validator as null; a JSON `null` body is refused by the parser.
 */
function optionalBody(operation: Json): void {
  const body = operation.requestBody as { required?: boolean; description?: string; content: Record<string, { schema: Json }> } | undefined
  if (!body) return
  body.required = false
  body.description = 'Optional: an empty body means all defaults. Must be a JSON object when present.'
  for (const media of Object.values(body.content)) {
    const anyOf = media.schema.anyOf as Json[] | undefined
    if (anyOf) media.schema = anyOf.find((s) => s.type !== 'null') ?? media.schema
  }
}
