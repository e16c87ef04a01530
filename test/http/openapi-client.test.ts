/**
 * openapi.yaml is what client generators need: Redocly's recommended ruleset finds nothing in it,
 * and a client generated from it (openapi-typescript's types + openapi-fetch) type-checks and runs
 * acquire → inspect → renew → release against the real service on a real redis-server.
 */
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = (name: string) => path.join(root, 'node_modules/.bin', name)
const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }

t.test('redocly lint (recommended ruleset): 0 errors, 0 warnings', async (t) => {
  const { stdout } = await run(bin('redocly'), ['lint', 'openapi.yaml', '--format=json'], { cwd: root, env: quiet })
  const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] }
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 }, report.problems.map((p) => `${p.ruleId}: ${p.message}`).join('\n'))
})

/** The client program: typed by the generated `paths` and `operations` (one per operationId). */
const clientSource = `
import createClient from 'openapi-fetch'
import type { operations, paths } from './schema.js'

type Grant = operations['acquireLock']['responses'][201]['content']['application/json']
type Inspected = operations['inspectLock']['responses'][200]['content']['application/json']
type Released = operations['releaseLock']['responses'][200]['content']['application/json']

export async function flow(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl })
  const acquired = await client.POST('/locks/{key}', { params: { path: { key }, query: { ttl: '30s' } }, body: { reentrant: false } })
  if (acquired.response.status !== 201 || !acquired.data) throw new Error('acquire: ' + acquired.response.status)
  const grant: Grant = acquired.data
  const held = await client.POST('/locks/{key}', { params: { path: { key } } })
  const inspected = await client.GET('/locks/{key}', { params: { path: { key } } })
  if (!inspected.data) throw new Error('inspect: ' + inspected.response.status)
  const state: Inspected = inspected.data
  const renewed = await client.PUT('/locks/{key}/renew', { params: { path: { key }, header: { 'lock-token': grant.token } }, body: { ttlMs: 60000 } })
  if (!renewed.data) throw new Error('renew: ' + renewed.response.status)
  const released = await client.DELETE('/locks/{key}', { params: { path: { key }, header: { 'lock-token': grant.token } } })
  if (!released.data) throw new Error('release: ' + released.response.status)
  const result: Released = released.data
  const gone = await client.GET('/locks/{key}', { params: { path: { key } } })
  return {
    grant,
    held: { status: held.response.status, error: held.error?.error, retryAfter: held.response.headers.get('retry-after') },
    state,
    renewed: renewed.data,
    released: result,
    gone: { status: gone.response.status, error: gone.error?.error },
    requestId: acquired.response.headers.get('x-request-id'),
  }
}
`

t.test('a client generated from openapi.yaml type-checks and runs acquire → inspect → renew → release', async (t) => {
  // Under node_modules/.cache, so that the program resolves openapi-fetch from this repository.
  const dir = path.join(root, 'node_modules/.cache', `lock-service-client-${process.pid}`)
  await mkdir(dir, { recursive: true })
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await run(bin('openapi-typescript'), [path.join(root, 'openapi.yaml'), '-o', path.join(dir, 'schema.ts')], { cwd: root, env: quiet })
  await writeFile(path.join(dir, 'client.ts'), clientSource)
  await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n')
  // Type-checked and compiled to JavaScript next to it (what a project using the client would do).
  const tsc = await run(
    bin('tsc'),
    [
      '--strict',
      '--noUncheckedIndexedAccess',
      '--target',
      'ES2022',
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--skipLibCheck',
      path.join(dir, 'client.ts'),
    ],
    { cwd: root },
  ).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  )
  t.equal(tsc, '', 'the generated types and the program type-check and compile')

  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  await app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const { flow } = (await import(pathToFileURL(path.join(dir, 'client.js')).href)) as {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the generated client's answers, checked field by field below
    flow: (baseUrl: string, key: string) => Promise<Record<string, any>>
  }
  const r = await flow(baseUrl, 'generated:client')
  t.match(r.grant, { key: 'generated:client', mode: 'exclusive', ttlMs: 30_000, holdCount: 1 })
  t.ok(r.grant.fence > 0 && r.grant.validityMs > 0, 'a fence and a validity')
  t.same(r.held, { status: 409, error: 'lock_held', retryAfter: r.held.retryAfter }, 'someone else: 409 lock_held')
  t.ok(Number(r.held.retryAfter) >= 1, 'with Retry-After')
  t.match(r.state, { key: 'generated:client', mode: 'exclusive', fence: r.grant.fence, holdCount: 1 })
  t.match(r.renewed, { fence: r.grant.fence, ttlMs: 60_000 })
  t.same(r.released, { key: 'generated:client', released: true, holdCount: 0 })
  t.same(r.gone, { status: 404, error: 'lock_not_found' })
  t.type(r.requestId, 'string', 'X-Request-Id')
})
