import { readFile } from 'node:fs/promises'
import t from 'tap'
import YAML from 'yaml'
import { Validator } from '@seriousme/openapi-schema-validator'
import { openapiPath } from '../../src/app.js'
import { generateOpenapi } from '../../scripts/openapi.js'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const committed = await readFile(openapiPath, 'utf8')

t.test('openapi.yaml is what the routes’ zod schemas generate (run `npm run openapi` after a schema change)', async (t) => {
  const generated = await generateOpenapi()
  t.equal(committed, generated, 'openapi.yaml matches the schemas')
})

t.test('openapi.yaml is a valid OpenAPI 3 document', async (t) => {
  const validator = new Validator()
  const result = await validator.validate(openapiPath.pathname)
  t.same(result.errors ?? [], [], 'no validation errors')
  t.ok(result.valid, `valid OpenAPI ${validator.version}`)
})

t.test('every operation documents a success and its error codes', async (t) => {
  const doc = YAML.parse(committed) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
  const expected: Record<string, string[]> = {
    'post /locks/{key}': ['200', '201', '400', '401', '403', '409', '413', '415', '429', '503'],
    'put /locks/{key}/renew': ['200', '400', '401', '403', '404', '409', '503'],
    'delete /locks/{key}': ['200', '400', '401', '403', '404', '409', '503'],
    'get /locks/{key}': ['200', '400', '401', '403', '404', '503'],
    'get /locks': ['200', '400', '401', '403', '503'],
    'post /rwlocks/{key}/read': ['200', '201', '400', '401', '403', '409', '429', '503'],
    'post /rwlocks/{key}/write': ['200', '201', '400', '401', '403', '409', '429', '503'],
    'put /rwlocks/{key}/read/renew': ['200', '400', '404', '409', '503'],
    'put /rwlocks/{key}/write/renew': ['200', '400', '404', '409', '503'],
    'delete /rwlocks/{key}/read': ['200', '400', '404', '409', '503'],
    'delete /rwlocks/{key}/write': ['200', '400', '404', '409', '503'],
    'get /rwlocks/{key}': ['200', '400', '404', '503'],
    'get /rwlocks': ['200', '400', '401', '403', '503'],
    'post /semaphores/{key}': ['200', '201', '400', '401', '403', '409', '413', '415', '429', '503'],
    'put /semaphores/{key}/renew': ['200', '400', '401', '403', '404', '409', '503'],
    'delete /semaphores/{key}': ['200', '400', '401', '403', '404', '409', '503'],
    'get /semaphores/{key}': ['200', '400', '401', '403', '404', '503'],
    'get /semaphores': ['200', '400', '401', '403', '503'],
    'get /healthz': ['200'],
    'get /readyz': ['200', '503'],
    'get /metrics': ['200'],
    'get /openapi.yaml': ['200'],
  }
  for (const [operation, statuses] of Object.entries(expected)) {
    const [method, path] = operation.split(' ') as [string, string]
    const responses = doc.paths[path]?.[method]?.responses
    t.ok(responses, `${operation} is documented`)
    for (const status of statuses) t.ok(responses?.[status], `${operation} documents ${status}`)
  }
})

t.test('stable operationIds, servers, license, declared headers, no ±2^53 bounds', async (t) => {
  type Operation = {
    operationId?: string
    responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>
  }
  const doc = YAML.parse(committed) as {
    info: { license?: unknown }
    servers?: unknown[]
    paths: Record<string, Record<string, Operation>>
    components: { headers?: Record<string, unknown> }
  }
  const expected: Record<string, string> = {
    'post /locks/{key}': 'acquireLock',
    'put /locks/{key}/renew': 'renewLock',
    'delete /locks/{key}': 'releaseLock',
    'get /locks/{key}': 'inspectLock',
    'get /locks': 'listLocks',
    'post /rwlocks/{key}/read': 'acquireReadHold',
    'put /rwlocks/{key}/read/renew': 'renewReadHold',
    'delete /rwlocks/{key}/read': 'releaseReadHold',
    'post /rwlocks/{key}/write': 'acquireWriteHold',
    'put /rwlocks/{key}/write/renew': 'renewWriteHold',
    'delete /rwlocks/{key}/write': 'releaseWriteHold',
    'get /rwlocks/{key}': 'inspectRwLock',
    'get /rwlocks': 'listRwLocks',
    'post /semaphores/{key}': 'acquirePermit',
    'put /semaphores/{key}/renew': 'renewPermit',
    'delete /semaphores/{key}': 'releasePermit',
    'get /semaphores/{key}': 'inspectSemaphore',
    'get /semaphores': 'listSemaphores',
    'post /sessions': 'openSession',
    'put /sessions/{id}/keepalive': 'keepaliveSession',
    'get /sessions/{id}': 'inspectSession',
    'delete /sessions/{id}': 'closeSession',
    'get /sessions/{id}/watch': 'watchSession',
    'get /locks/{key}/watch': 'watchLock',
    'get /rwlocks/{key}/read/watch': 'watchReadHold',
    'get /rwlocks/{key}/write/watch': 'watchWriteHold',
    'get /semaphores/{key}/watch': 'watchPermit',
    'post /elections/{name}/campaign': 'campaign',
    'put /elections/{name}/proclaim': 'proclaim',
    'put /elections/{name}/renew': 'renewLeadership',
    'delete /elections/{name}': 'resign',
    'get /elections/{name}': 'inspectElection',
    'get /elections': 'listElections',
    'get /elections/{name}/observe': 'observeElection',
    'get /elections/{name}/watch': 'watchLeadership',
    'get /healthz': 'getHealth',
    'get /readyz': 'getReadiness',
    'get /metrics': 'getMetrics',
    'get /openapi.yaml': 'getOpenApi',
  }
  const found = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method} ${path}`, op.operationId]),
  )
  t.same(Object.fromEntries(found), expected, 'every operation, with its operationId')
  t.same(doc.info.license, { name: 'MIT', identifier: 'MIT' })
  t.ok((doc.servers ?? []).length > 0, 'servers')
  t.same(Object.keys(doc.components.headers ?? {}).sort(), ['Retry-After', 'X-Request-Id'])
  for (const [operation, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries(op.responses)) {
        t.ok(response.headers?.['X-Request-Id'], `${method} ${operation} ${status}: X-Request-Id`)
        const isError = Object.values(response.content ?? {}).some(
          (media) => (media.schema as { $ref?: string }).$ref === '#/components/schemas/Error',
        )
        if (isError && ['409', '429', '503'].includes(status))
          t.ok(response.headers?.['Retry-After'], `${method} ${operation} ${status}: Retry-After`)
        if (isError) t.same(Object.keys(response.content ?? {}), ['application/json'], `${method} ${operation} ${status}: errors are JSON`)
      }
    }
  }
  t.notMatch(committed, /9007199254740991/, 'no ±(2^53 − 1) bounds')
  const readyz503 = doc.paths['/readyz']?.get?.responses['503']
  t.match(readyz503?.description, /Not ready/, "/readyz's 503 is the readiness body")
  t.notMatch(JSON.stringify(readyz503?.content), /components\/schemas\/Error/)
})

t.test('GET /openapi.yaml serves the same file', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const res = await app.inject({ method: 'GET', url: '/openapi.yaml' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /yaml/)
  t.equal(res.body, committed)
})

t.test('every watch declares its Server-Sent Events, and a real stream sends what they declare', async (t) => {
  type Schema = {
    title?: string
    const?: unknown
    $ref?: string
    enum?: string[]
    required?: string[]
    properties?: Record<string, Schema>
  }
  type Media = Record<string, { schema: Schema & { oneOf?: Schema[] } }>
  const doc = YAML.parse(committed) as { paths: Record<string, { get?: { responses: Record<string, { content?: Media }> } }> }
  const streamOf = (path: string) => doc.paths[path]?.get?.responses['200']?.content ?? {}
  const watches = Object.keys(doc.paths).filter((path) => path.endsWith('/watch'))
  t.equal(watches.length, 6, 'six watches')
  for (const path of watches) {
    const content = streamOf(path)
    t.same(Object.keys(content), ['application/json', 'text/event-stream'], `${path}: JSON, or a stream`)
    const events = content['text/event-stream']?.schema.oneOf ?? []
    t.same(
      events.map((e) => [e.properties?.event?.const, e.properties?.data?.required ?? e.properties?.data?.$ref]),
      [
        ['held', ['held', 'remainingMs']],
        ['lost', ['held', 'reason', 'at']],
        ['error', '#/components/schemas/Error'],
      ],
      `${path}: held, lost, error and their data`,
    )
    t.same(
      events[1]?.properties?.data?.properties?.reason?.enum,
      content['application/json']?.schema.properties?.reason?.enum,
      `${path}: a lost event's reasons are the JSON answer's`,
    )
  }

  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const grant = (await app.inject({ method: 'POST', url: '/locks/sse-contract?ttl=300ms' })).json() as { token: string }
  const res = await app.inject({
    url: '/locks/sse-contract/watch?wait=5s',
    headers: { accept: 'text/event-stream', 'lock-token': grant.token },
  })
  t.match(res.headers['content-type'], /^text\/event-stream/)
  const declared = streamOf('/locks/{key}/watch')['text/event-stream']?.schema.oneOf ?? []
  const sent = res.body
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as object }))
  t.same(
    sent.map((e) => e.event),
    ['held', 'lost'],
    'held at once, lost when the lease runs out',
  )
  for (const { event, data } of sent) {
    const schema = declared.find((e) => e.properties?.event?.const === event)?.properties?.data
    t.same(Object.keys(data).sort(), [...(schema?.required ?? ['(undeclared)'])].sort(), `${event}: the declared fields`)
  }
})
