/**
 * Malformed requests on every route of the contract (bad-input.test.ts goes deep on /locks): bad
 * bodies, query parameters, headers and path parameters on elections, fence checks, sessions,
 * watches and observes, lock-delay options, listings. Each is a 4xx in the one JSON error shape,
 * never a 5xx, and leaves Redis as it was. A last test fails when a route has no row here.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import YAML from 'yaml'
import { openapiPath } from '../../src/app.js'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { toInject } from '../helpers/inject-row.js'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

interface Row {
  method: Method
  url: string
  headers?: Record<string, string>
  /** A string is sent as is (JSON content type unless given); anything else JSON-encoded. */
  payload?: unknown
  status: number
  error: string
}

const TOKEN = 'leader-token-00000000000001'
const OTHER = 'other-token-000000000000002'
const SESSION = `s.${'A'.repeat(22)}`
const json = { 'content-type': 'application/json' }
const leader = { 'lock-token': TOKEN }

/** [what is wrong, row] */
const rows: [string, Row][] = [
  // ── elections ──────────────────────────────────────────────────────────────────────────────────
  ['campaign without a candidate', { method: 'POST', url: '/elections/el2/campaign', status: 400, error: 'invalid_request' }],
  [
    'campaign: candidate with a control character',
    { method: 'POST', url: '/elections/el2/campaign', payload: { candidate: 'a\u0007b' }, status: 400, error: 'invalid_request' },
  ],
  [
    'campaign: value over 4096 bytes',
    {
      method: 'POST',
      url: '/elections/el2/campaign',
      payload: { candidate: 'c', value: 'v'.repeat(4097) },
      status: 400,
      error: 'invalid_request',
    },
  ],
  [
    'campaign: candidate in query and body differ',
    { method: 'POST', url: '/elections/el2/campaign?candidate=a', payload: { candidate: 'b' }, status: 400, error: 'invalid_request' },
  ],
  [
    'campaign: unknown body field',
    { method: 'POST', url: '/elections/el2/campaign', payload: { candidate: 'c', term: 3 }, status: 400, error: 'invalid_request' },
  ],
  [
    'campaign: lockDelayMs (not an election field)',
    { method: 'POST', url: '/elections/el2/campaign', payload: { candidate: 'c', lockDelayMs: 10 }, status: 400, error: 'invalid_request' },
  ],
  ['campaign: ttl=soon', { method: 'POST', url: '/elections/el2/campaign?candidate=c&ttl=soon', status: 400, error: 'invalid_request' }],
  [
    'campaign: session that is not an id',
    { method: 'POST', url: '/elections/el2/campaign?candidate=c&session=abc', status: 400, error: 'invalid_request' },
  ],
  ['campaign: name with a space', { method: 'POST', url: '/elections/a%20b/campaign?candidate=c', status: 400, error: 'invalid_request' }],
  [
    'campaign: JSON array body',
    { method: 'POST', url: '/elections/el2/campaign', headers: json, payload: '[]', status: 400, error: 'invalid_request' },
  ],
  [
    'campaign: truncated JSON',
    { method: 'POST', url: '/elections/el2/campaign', headers: json, payload: '{"candidate":', status: 400, error: 'invalid_request' },
  ],
  [
    'campaign: text body',
    {
      method: 'POST',
      url: '/elections/el2/campaign',
      headers: { 'content-type': 'text/plain' },
      payload: 'c',
      status: 415,
      error: 'unsupported_media_type',
    },
  ],
  [
    'proclaim without a token',
    { method: 'PUT', url: '/elections/el/proclaim', payload: { value: 'x' }, status: 400, error: 'invalid_request' },
  ],
  [
    'proclaim: value a number',
    { method: 'PUT', url: '/elections/el/proclaim', headers: leader, payload: { value: 42 }, status: 400, error: 'invalid_request' },
  ],
  [
    'proclaim: a token too short',
    { method: 'PUT', url: '/elections/el/proclaim', payload: { token: 'short', value: 'x' }, status: 400, error: 'invalid_request' },
  ],
  [
    'proclaim: unknown query parameter',
    { method: 'PUT', url: '/elections/el/proclaim?value=x', headers: leader, status: 400, error: 'invalid_request' },
  ],
  [
    "proclaim by another token (control: not the leader's)",
    { method: 'PUT', url: '/elections/el/proclaim', payload: { token: OTHER, value: 'x' }, status: 409, error: 'not_owner' },
  ],
  ['renew leadership: ttl=0', { method: 'PUT', url: '/elections/el/renew?ttl=0', headers: leader, status: 400, error: 'invalid_request' }],
  [
    'renew leadership: ttlMs a string',
    { method: 'PUT', url: '/elections/el/renew', headers: leader, payload: { ttlMs: '1000' }, status: 400, error: 'invalid_request' },
  ],
  ['resign without a token', { method: 'DELETE', url: '/elections/el', status: 400, error: 'invalid_request' }],
  ['resign: force=maybe', { method: 'DELETE', url: '/elections/el?force=maybe', status: 400, error: 'invalid_request' }],
  [
    'resign: token in header and query differ',
    { method: 'DELETE', url: `/elections/el?token=${OTHER}`, headers: leader, status: 400, error: 'invalid_request' },
  ],
  ['inspect an election: unknown parameter', { method: 'GET', url: '/elections/el?holds=true', status: 400, error: 'invalid_request' }],
  ['inspect an election: name with {}', { method: 'GET', url: '/elections/%7Bel%7D', status: 400, error: 'invalid_request' }],
  ['list elections: limit=0', { method: 'GET', url: '/elections?limit=0', status: 400, error: 'invalid_request' }],
  ['list elections: bad cursor', { method: 'GET', url: '/elections?cursor=x', status: 400, error: 'invalid_request' }],
  ['observe: after=-1', { method: 'GET', url: '/elections/el/observe?after=-1', status: 400, error: 'invalid_request' }],
  ['observe: wait over MAX_WATCH_MS', { method: 'GET', url: '/elections/el/observe?wait=2h', status: 400, error: 'invalid_request' }],
  [
    'observe: bad Last-Event-ID',
    { method: 'GET', url: '/elections/el/observe', headers: { 'last-event-id': 'abc' }, status: 400, error: 'invalid_request' },
  ],
  ['watch leadership without a token', { method: 'GET', url: '/elections/el/watch', status: 400, error: 'invalid_request' }],
  [
    'watch leadership: wait=forever',
    { method: 'GET', url: '/elections/el/watch?wait=forever', headers: leader, status: 400, error: 'invalid_request' },
  ],
  ['POST on /elections/:name', { method: 'POST', url: '/elections/el', status: 405, error: 'method_not_allowed' }],

  // ── fence checks ───────────────────────────────────────────────────────────────────────────────
  ['lock fence not a number', { method: 'GET', url: '/locks/k/fence/abc', status: 400, error: 'invalid_request' }],
  ['lock fence negative', { method: 'GET', url: '/locks/k/fence/-1', status: 400, error: 'invalid_request' }],
  ['rwlock fence a float', { method: 'GET', url: '/rwlocks/k/fence/1.5', status: 400, error: 'invalid_request' }],
  ['semaphore fence over 2^53', { method: 'GET', url: '/semaphores/k/fence/99999999999999999999', status: 400, error: 'invalid_request' }],
  ['term check: empty term', { method: 'GET', url: '/elections/el/fence/', status: 400, error: 'invalid_request' }],
  ['fence check with a query parameter', { method: 'GET', url: '/locks/k/fence/3?force=true', status: 400, error: 'invalid_request' }],
  ['fence check: key with a space', { method: 'GET', url: '/locks/a%20b/fence/3', status: 400, error: 'invalid_request' }],
  ['DELETE on a fence check', { method: 'DELETE', url: '/locks/k/fence/3', status: 405, error: 'method_not_allowed' }],

  // ── sessions ───────────────────────────────────────────────────────────────────────────────────
  ['open a session: ttlMs 0', { method: 'POST', url: '/sessions', payload: { ttlMs: 0 }, status: 400, error: 'invalid_request' }],
  [
    'open a session: lockDelayMs over MAX_LOCK_DELAY_MS',
    { method: 'POST', url: '/sessions', payload: { lockDelayMs: 3_600_001 }, status: 400, error: 'invalid_request' },
  ],
  ['open a session: unknown field', { method: 'POST', url: '/sessions', payload: { ttl: 1000 }, status: 400, error: 'invalid_request' }],
  [
    'open a session: JSON null',
    { method: 'POST', url: '/sessions', headers: json, payload: 'null', status: 400, error: 'invalid_request' },
  ],
  ['open a session: query parameter', { method: 'POST', url: '/sessions?ttl=5s', status: 400, error: 'invalid_request' }],
  ['keepalive: an id that is a token', { method: 'PUT', url: `/sessions/${OTHER}/keepalive`, status: 400, error: 'invalid_request' }],
  [
    'keepalive: truncated JSON',
    { method: 'PUT', url: `/sessions/${SESSION}/keepalive`, headers: json, payload: '[', status: 400, error: 'invalid_request' },
  ],
  [
    'keepalive: a body field (the TTL is set at open)',
    { method: 'PUT', url: `/sessions/${SESSION}/keepalive`, payload: { ttlMs: 5000 }, status: 400, error: 'invalid_request' },
  ],
  [
    'keepalive: an empty body object (control)',
    { method: 'PUT', url: `/sessions/${SESSION}/keepalive`, payload: {}, status: 404, error: 'session_not_found' },
  ],
  [
    'close a session: a body field',
    { method: 'DELETE', url: `/sessions/${SESSION}`, payload: { force: true }, status: 400, error: 'invalid_request' },
  ],
  ['keepalive of no session (control)', { method: 'PUT', url: `/sessions/${SESSION}/keepalive`, status: 404, error: 'session_not_found' }],
  ['show a session: id too short', { method: 'GET', url: '/sessions/s.abc', status: 400, error: 'invalid_request' }],
  [
    'close a session: unknown parameter',
    { method: 'DELETE', url: `/sessions/${SESSION}?force=true`, status: 400, error: 'invalid_request' },
  ],
  ['watch a session: wait=-1s', { method: 'GET', url: `/sessions/${SESSION}/watch?wait=-1s`, status: 400, error: 'invalid_request' }],
  [
    'watch a session: token parameter',
    { method: 'GET', url: `/sessions/${SESSION}/watch?token=${OTHER}`, status: 400, error: 'invalid_request' },
  ],
  ['PATCH on /sessions/:id', { method: 'PUT', url: `/sessions/${SESSION}`, status: 405, error: 'method_not_allowed' }],

  // ── lock-delay options on acquires ─────────────────────────────────────────────────────────────
  ['lockDelayMs negative', { method: 'POST', url: '/locks/k', payload: { lockDelayMs: -1 }, status: 400, error: 'invalid_request' }],
  [
    'lockDelayMs a string',
    { method: 'POST', url: '/rwlocks/k/write', payload: { lockDelayMs: '10' }, status: 400, error: 'invalid_request' },
  ],
  ['lockDelay=later', { method: 'POST', url: '/semaphores/k?limit=2&lockDelay=later', status: 400, error: 'invalid_request' }],
  ['lockDelay over MAX_LOCK_DELAY_MS', { method: 'POST', url: '/rwlocks/k/read?lockDelay=2h', status: 400, error: 'invalid_request' }],
  [
    'lockDelay in query and body differ',
    { method: 'POST', url: '/locks/k?lockDelay=1s', payload: { lockDelayMs: 2000 }, status: 400, error: 'invalid_request' },
  ],
  [
    'lockDelay on renew',
    { method: 'PUT', url: '/locks/k/renew?lockDelay=1s', headers: { 'lock-token': OTHER }, status: 400, error: 'invalid_request' },
  ],

  // ── watches of holds ───────────────────────────────────────────────────────────────────────────
  ['lock watch without a token', { method: 'GET', url: '/locks/k/watch', status: 400, error: 'invalid_request' }],
  [
    'read watch: token with a dot',
    { method: 'GET', url: '/rwlocks/k/read/watch?token=bad.token.0000000000', status: 400, error: 'invalid_request' },
  ],
  [
    'write watch: wait twice',
    { method: 'GET', url: `/rwlocks/k/write/watch?wait=1s&wait=2s&token=${OTHER}`, status: 400, error: 'invalid_request' },
  ],
  [
    'semaphore watch: unknown parameter',
    { method: 'GET', url: `/semaphores/k/watch?limit=2&token=${OTHER}`, status: 400, error: 'invalid_request' },
  ],
  ['POST on a watch', { method: 'POST', url: '/locks/k/watch', status: 405, error: 'method_not_allowed' }],

  // ── the other routes, once each ────────────────────────────────────────────────────────────────
  ['lock acquire: ttl=1d', { method: 'POST', url: '/locks/k?ttl=1d', status: 400, error: 'invalid_request' }],
  [
    'lock renew: body a string',
    { method: 'PUT', url: '/locks/k/renew', headers: json, payload: '"x"', status: 400, error: 'invalid_request' },
  ],
  ['lock release: force=yes', { method: 'DELETE', url: '/locks/k?force=yes', status: 400, error: 'invalid_request' }],
  ['lock inspect: readers=true', { method: 'GET', url: '/locks/k?readers=true', status: 400, error: 'invalid_request' }],
  ['lock listing: limit=abc', { method: 'GET', url: '/locks?limit=abc', status: 400, error: 'invalid_request' }],
  ['read release: no token', { method: 'DELETE', url: '/rwlocks/k/read', status: 400, error: 'invalid_request' }],
  [
    'read renew: unknown field',
    { method: 'PUT', url: '/rwlocks/k/read/renew', payload: { token: OTHER, permits: 1 }, status: 400, error: 'invalid_request' },
  ],
  [
    'write release: fence without force',
    { method: 'DELETE', url: '/rwlocks/k/write?fence=1', headers: { 'lock-token': OTHER }, status: 400, error: 'invalid_request' },
  ],
  [
    'write renew: ttlMs 1e12',
    { method: 'PUT', url: '/rwlocks/k/write/renew', payload: { token: OTHER, ttlMs: 1e12 }, status: 400, error: 'invalid_request' },
  ],
  ['rwlock inspect: readers=1', { method: 'GET', url: '/rwlocks/k?readers=1', status: 400, error: 'invalid_request' }],
  ['rwlock listing: prefix with a space', { method: 'GET', url: '/rwlocks?prefix=a%20b', status: 400, error: 'invalid_request' }],
  [
    'semaphore acquire: permits over limit',
    { method: 'POST', url: '/semaphores/k?limit=2&permits=3', status: 400, error: 'invalid_request' },
  ],
  [
    'semaphore release: no token',
    { method: 'DELETE', url: '/semaphores/k', headers: json, payload: '{}', status: 400, error: 'invalid_request' },
  ],
  [
    'semaphore renew: token too long',
    { method: 'PUT', url: '/semaphores/k/renew', payload: { token: 't'.repeat(129) }, status: 400, error: 'invalid_request' },
  ],
  ['semaphore inspect: holds=2', { method: 'GET', url: '/semaphores/k?holds=2', status: 400, error: 'invalid_request' }],
  ['semaphore listing: cursor=-1', { method: 'GET', url: '/semaphores?cursor=-1', status: 400, error: 'invalid_request' }],
  [
    'inspect an election: name of 201 characters',
    { method: 'GET', url: `/elections/${'n'.repeat(201)}`, status: 400, error: 'invalid_request' },
  ],
]

/** A route of the contract as a pattern of concrete URLs: `{key}` is one path segment (maybe empty). */
const routePattern = (path: string) => new RegExp(`^${path.replace(/\{\w+\}/g, '[^/?]*')}(\\?|$)`)

t.test('every route of the contract has rows here (ops routes aside)', async (t) => {
  const doc = YAML.parse(await readFile(openapiPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> }
  const ops = new Set(['/healthz', '/readyz', '/metrics', '/openapi.yaml'])
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (ops.has(path)) continue
    const pattern = routePattern(path)
    for (const method of Object.keys(operations)) {
      const covered = rows.some(([, r]) => r.method === method.toUpperCase() && pattern.test(r.url) && r.status === 400)
      t.ok(covered, `${method.toUpperCase()} ${path} has a 400 row`)
    }
  }
  t.equal(new Set(rows.map(([name]) => name)).size, rows.length, 'row names are distinct')
})

t.test('malformed requests on every route: 4xx JSON, never a 5xx, Redis untouched', async (t) => {
  const redis = await startRedis({ t })
  const { app, logText } = await startApp(t, [redis.url])
  const campaign = await app.inject({
    method: 'POST',
    url: '/elections/el/campaign',
    payload: { candidate: 'c1', token: TOKEN, ttlMs: 600_000 },
  })
  t.equal(campaign.statusCode, 201, 'election "el" has a leader')
  const before = await redis.keys()

  for (const [name, row] of rows) {
    await t.test(`${row.method} ${row.url.slice(0, 80)} — ${name}`, async (t) => {
      const res = await app.inject(toInject(row))
      t.ok(res.statusCode >= 400 && res.statusCode < 500, `a 4xx (got ${res.statusCode})`)
      t.equal(res.statusCode, row.status, 'status')
      t.match(res.headers['content-type'], /^application\/json/)
      const body = JSON.parse(res.body) as unknown
      t.ok(errorSchema.safeParse(body).success, 'the error shape')
      t.equal((body as { error?: string }).error, row.error, 'error code')
      t.notOk(res.body.includes(TOKEN) || res.body.includes(OTHER), 'no token echoed')
      t.same(await redis.keys(), before, 'Redis is untouched')
    })
  }
  t.notOk(logText().includes(TOKEN), 'the leader token never reaches the logs')
})
