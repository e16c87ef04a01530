/**
 * A read-only API key ("readOnly": true in AUTH_FILE): inspect, fence checks and watches on its
 * prefixes; every write — each POST, PUT and DELETE the contract lists — is 403 and changes nothing.
 * The same requests with a read-write key on the same prefixes are not 403, so each row can fail.
 */
import { readFile } from 'node:fs/promises'
import t from 'tap'
import YAML from 'yaml'
import { buildApp, openapiPath } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { startRedis } from '../../harness/redis-server.js'
import { writeAuthFile } from '../helpers/auth-file.js'

const reader = { name: 'checker', secret: 'sk_checker_0123456789abcdef', prefixes: ['res:'], readOnly: true }
const writer = { name: 'worker', secret: 'sk_worker_0123456789abcdefg', prefixes: ['res:'] }
const auditor = { name: 'auditor', secret: 'sk_auditor_0123456789abcdef', prefixes: [], admin: true, readOnly: true }
const bearer = (k: { secret: string }) => ({ authorization: `Bearer ${k.secret}` })

const contract = YAML.parse(await readFile(openapiPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> }
const writes = Object.entries(contract.paths).flatMap(([path, ops]) =>
  Object.keys(ops)
    .filter((m) => m !== 'get')
    .map((method) => ({ method: method.toUpperCase() as 'POST' | 'PUT' | 'DELETE', path })),
)
const filled = (path: string) =>
  path.replace('{key}', 'res:k').replace('{id}', 's.AAAAAAAAAAAAAAAAAAAAAA').replace('{fence}', '1').replace('{name}', 'res:k')

t.test('the AUTH_FILE field: a boolean, false by default', async (t) => {
  t.throws(() => loadConfig({ AUTH_FILE: writeAuthFile([{ ...writer, readOnly: 'yes' as unknown as boolean }]) }), /readOnly/)
  const config = loadConfig({ AUTH_FILE: writeAuthFile([writer, reader]) })
  t.same(
    config.auth?.keys.map((k) => [k.name, k.readOnly]),
    [
      ['worker', false],
      ['checker', true],
    ],
  )
})

t.test('every write route is 403 for a read-only key and changes nothing; not for a read-write key', async (t) => {
  t.ok(writes.length >= 15, `${writes.length} write operations in the contract`)
  const redis = await startRedis({ t })
  const app = await buildApp(
    loadConfig({ REDIS_URLS: redis.url, AUTH_FILE: writeAuthFile([reader, writer, auditor]), LOG_LEVEL: 'silent' }),
  )
  t.teardown(() => app.close())
  // Something for the writes to act on: a hold of each kind, owned by the read-write key.
  const lock = (await app.inject({ method: 'POST', url: '/locks/res:k?ttl=60s', headers: bearer(writer) })).json()
  t.ok(lock.token)
  for (const { method, path } of writes) {
    const before = await redis.keys()
    const url = filled(path) + (path.startsWith('/semaphores') && method === 'POST' ? '?limit=2' : '')
    const headers = { ...bearer(reader), 'lock-token': lock.token, 'content-type': 'application/json' }
    for (const key of [reader, auditor]) {
      const res = await app.inject({ method, url, headers: { ...headers, ...bearer(key) }, payload: '{}' })
      t.equal(res.statusCode, 403, `${key.name}: ${method} ${path} → 403`)
      t.equal(res.json().error, 'forbidden')
      t.match(res.json().message, /read-only/)
    }
    t.same(await redis.keys(), before, `${method} ${path}: nothing changed in Redis`)
    const allowed = await app.inject({ method, url, headers: { ...headers, ...bearer(writer) }, payload: '{}' })
    t.not(allowed.statusCode, 403, `the read-write key: ${method} ${path} → ${allowed.statusCode}`)
  }
})

t.test('a read-only key inspects, checks fences and watches on its prefixes only', async (t) => {
  const redis = await startRedis({ t })
  const app = await buildApp(
    loadConfig({ REDIS_URLS: redis.url, AUTH_FILE: writeAuthFile([reader, writer, auditor]), LOG_LEVEL: 'silent' }),
  )
  t.teardown(() => app.close())
  const grant = (await app.inject({ method: 'POST', url: '/locks/res:k?ttl=60s', headers: bearer(writer) })).json()
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { ...bearer(reader), ...headers } })

  t.equal((await get('/locks/res:k')).json().fence, grant.fence, 'inspect')
  t.same((await get(`/locks/res:k/fence/${grant.fence}`)).json(), { current: true, fence: grant.fence, held: true }, 'a fence check')
  t.equal((await get('/rwlocks/res:k')).statusCode, 404, 'inspect of what is not held: 404, not 403')
  t.equal((await get(`/semaphores/res:k/fence/${grant.fence}`)).json().current, false)
  const watch = await get('/locks/res:k/watch?wait=0', { 'lock-token': grant.token })
  t.equal(watch.statusCode, 200, 'a watch (with the token the holder gave it)')
  t.equal(watch.json().held, true)
  t.equal((await get('/locks/other:k/fence/1')).statusCode, 403, 'outside its prefixes: 403 as for any key')
  t.equal((await get('/locks?prefix=res:')).statusCode, 403, 'not an admin key: no listings')
  const audit = await app.inject({ method: 'GET', url: '/locks?prefix=res:', headers: bearer(auditor) })
  t.equal(audit.statusCode, 200, 'an admin key that is read-only lists')
  t.equal(audit.json().items.length, 1)
  const forced = await app.inject({ method: 'DELETE', url: '/locks/res:k?force=true', headers: bearer(auditor) })
  t.equal(forced.statusCode, 403, 'but does not force-release')
  t.equal((await get(`/locks/res:k/fence/${grant.fence}`)).json().current, true, 'the hold is still there')
})
