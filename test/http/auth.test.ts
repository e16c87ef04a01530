import t, { type Test } from 'tap'
import { loadConfig, ConfigError } from '../../src/config.js'
import { buildApp } from '../../src/app.js'
import { Writable } from 'node:stream'
import { writeFileSync } from 'node:fs'
import { startRedis } from '../../harness/redis-server.js'
import { writeAuthFile } from '../helpers/auth-file.js'

const keys = [
  { name: 'billing', secret: 'sk_billing_0123456789abcdef', prefixes: ['billing:'] },
  { name: 'reports', secret: 'sk_reports_0123456789abcdef', prefixes: ['reports:', 'shared:'] },
  { name: 'ops', secret: 'sk_ops_admin_0123456789abcdef', prefixes: [], admin: true },
]
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })
const [billing, reports, ops] = keys as [(typeof keys)[0], (typeof keys)[0], (typeof keys)[0]]

async function authApp(t: Test, redisUrl: string, extra: Record<string, string> = {}) {
  const lines: string[] = []
  // No delay before a 401 here (33 of them): limits.test.ts tests the delay.
  const config = loadConfig({
    REDIS_URLS: redisUrl,
    AUTH_FILE: writeAuthFile(keys),
    LOG_LEVEL: 'info',
    AUTH_FAILURE_DELAY_MS: '0',
    ...extra,
  })
  const app = await buildApp(config, {
    logStream: new Writable({
      write: (c: Buffer, _e, done) => {
        lines.push(c.toString())
        done()
      },
    }),
  })
  t.teardown(() => app.close())
  return { app, logText: () => lines.join('') }
}

/** Every lock route, with a key to put in it. */
const routes = (key: string, token = 'some-owner-token-000000') =>
  [
    { method: 'POST', url: `/locks/${key}` },
    { method: 'PUT', url: `/locks/${key}/renew`, headers: { 'lock-token': token } },
    { method: 'DELETE', url: `/locks/${key}`, headers: { 'lock-token': token } },
    { method: 'GET', url: `/locks/${key}` },
    { method: 'POST', url: `/rwlocks/${key}/read` },
    { method: 'POST', url: `/rwlocks/${key}/write` },
    { method: 'PUT', url: `/rwlocks/${key}/read/renew`, headers: { 'lock-token': token } },
    { method: 'PUT', url: `/rwlocks/${key}/write/renew`, headers: { 'lock-token': token } },
    { method: 'DELETE', url: `/rwlocks/${key}/read`, headers: { 'lock-token': token } },
    { method: 'DELETE', url: `/rwlocks/${key}/write`, headers: { 'lock-token': token } },
    { method: 'GET', url: `/rwlocks/${key}` },
  ] as const

t.test('every lock route: 401 without a valid key, 403 outside the key’s prefixes, allowed inside', async (t) => {
  const redis = await startRedis({ t })
  const { app, logText } = await authApp(t, redis.url)
  for (const route of routes('billing:invoice-1')) {
    const label = `${route.method} ${route.url}`
    const base = { method: route.method, url: route.url, headers: { ...('headers' in route ? route.headers : {}) } }
    const before = await redis.keys()
    const none = await app.inject(base)
    t.equal(none.statusCode, 401, `${label}: no key → 401`)
    t.equal(none.json().error, 'unauthorized')
    t.equal(none.headers['www-authenticate'], 'Bearer')
    t.match(none.headers['x-request-id'], /^\S+$/, `${label}: a 401 carries the request id too`)
    const wrong = await app.inject({ ...base, headers: { ...base.headers, ...bearer('sk_not_a_key_0000000000') } })
    t.equal(wrong.statusCode, 401, `${label}: unknown secret → 401`)
    const basic = await app.inject({
      ...base,
      headers: { ...base.headers, authorization: `Basic ${Buffer.from(`x:${billing.secret}`).toString('base64')}` },
    })
    t.equal(basic.statusCode, 401, `${label}: not a Bearer key → 401`)
    const outside = await app.inject({ ...base, headers: { ...base.headers, ...bearer(reports.secret) } })
    t.equal(outside.statusCode, 403, `${label}: another team's key → 403`)
    t.equal(outside.json().error, 'forbidden')
    t.match(outside.json().message, /reports/)
    t.same(await redis.keys(), before, `${label}: the refused requests changed nothing in Redis`)
    const inside = await app.inject({ ...base, headers: { ...base.headers, ...bearer(billing.secret) } })
    t.notOk([401, 403].includes(inside.statusCode), `${label}: the billing key may (${inside.statusCode})`)
    const admin = await app.inject({ ...base, headers: { ...base.headers, ...bearer(ops.secret) } })
    t.notOk([401, 403].includes(admin.statusCode), `${label}: an admin key may use any key (${admin.statusCode})`)
  }
  for (const k of keys) t.notOk(logText().includes(k.secret), `${k.name}'s secret never appears in the logs`)
})

t.test('prefix scoping on several prefixes; a lock token never works on another key', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await authApp(t, redis.url)
  for (const key of ['reports:daily', 'shared:x']) {
    t.equal(
      (await app.inject({ method: 'POST', url: `/locks/${key}`, headers: bearer(reports.secret) })).statusCode,
      201,
      `${key} is in reports' prefixes`,
    )
  }
  t.equal(
    (await app.inject({ method: 'POST', url: '/locks/report', headers: bearer(reports.secret) })).statusCode,
    403,
    'a key that only looks alike is not',
  )
  const a = (await app.inject({ method: 'POST', url: '/locks/billing:a', headers: bearer(billing.secret) })).json()
  await app.inject({ method: 'POST', url: '/locks/billing:b', headers: bearer(billing.secret) })
  const renewB = await app.inject({
    method: 'PUT',
    url: '/locks/billing:b/renew',
    headers: { ...bearer(billing.secret), 'lock-token': a.token },
  })
  t.equal(renewB.statusCode, 409, "key A's token does not renew key B")
  const releaseB = await app.inject({
    method: 'DELETE',
    url: '/locks/billing:b',
    headers: { ...bearer(billing.secret), 'lock-token': a.token },
  })
  t.equal(releaseB.statusCode, 409, 'nor release it')
  const releaseFree = await app.inject({
    method: 'DELETE',
    url: '/locks/billing:c',
    headers: { ...bearer(billing.secret), 'lock-token': a.token },
  })
  t.equal(releaseFree.statusCode, 404, 'on a free key it holds nothing')
})

t.test('open routes stay open; /metrics can be protected; admin routes need an admin key', async (t) => {
  const redis = await startRedis({ t })
  const open = await authApp(t, redis.url)
  for (const url of ['/healthz', '/readyz', '/openapi.yaml', '/metrics']) {
    t.equal((await open.app.inject({ method: 'GET', url })).statusCode, 200, `${url} needs no key`)
  }
  const guarded = await authApp(t, redis.url, { PROTECT_METRICS: 'true' })
  t.equal((await guarded.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401, 'PROTECT_METRICS=true: /metrics needs a key')
  t.equal(
    (await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer(billing.secret) })).statusCode,
    200,
    'any valid key reads /metrics',
  )
  t.equal((await guarded.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)

  for (const url of ['/locks', '/rwlocks']) {
    t.equal((await open.app.inject({ method: 'GET', url })).statusCode, 401)
    t.equal(
      (await open.app.inject({ method: 'GET', url, headers: bearer(billing.secret) })).statusCode,
      403,
      `${url}: a non-admin key may not list`,
    )
    t.equal((await open.app.inject({ method: 'GET', url, headers: bearer(ops.secret) })).statusCode, 200, `${url}: an admin key may`)
  }
  await open.app.inject({ method: 'POST', url: '/locks/billing:forced', headers: bearer(billing.secret) })
  const notAdmin = await open.app.inject({ method: 'DELETE', url: '/locks/billing:forced?force=true', headers: bearer(billing.secret) })
  t.equal(notAdmin.statusCode, 403, 'force-release needs an admin key, even inside the prefixes')
  const forced = await open.app.inject({ method: 'DELETE', url: '/locks/billing:forced?force=true', headers: bearer(ops.secret) })
  t.equal(forced.statusCode, 200)
  t.match(open.logText(), /"admin":"ops","action":"force-release"/, 'the admin action is logged with the caller')
})

t.test('without AUTH_FILE the service is open and says so; a bad AUTH_FILE stops the start', async (t) => {
  const redis = await startRedis({ t })
  const lines: string[] = []
  const app = await buildApp(loadConfig({ REDIS_URLS: redis.url }), {
    logStream: new Writable({
      write: (c: Buffer, _e, done) => {
        lines.push(c.toString())
        done()
      },
    }),
  })
  t.teardown(() => app.close())
  t.match(lines.join(''), /"level":40.*AUTH_FILE is not set/, 'a warning at start')
  t.equal((await app.inject({ method: 'GET', url: '/locks' })).statusCode, 200, 'admin routes are open too')

  const bad = writeAuthFile(keys)
  writeFileSync(bad, JSON.stringify({ keys: [{ name: 'x', secretSha256: 'nothex', prefixes: [] }] }))
  for (const [file, pattern] of [
    ['/nonexistent/auth.json', /AUTH_FILE: cannot read/],
    [bad, /AUTH_FILE: .*secretSha256/],
  ] as const) {
    try {
      loadConfig({ AUTH_FILE: file })
      t.fail('should have thrown')
    } catch (err) {
      t.ok(err instanceof ConfigError)
      t.match((err as Error).message, pattern)
    }
  }
})
