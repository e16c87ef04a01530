/**
 * The service over HTTPS (TLS_CERT_FILE, TLS_KEY_FILE) and with client certificates required
 * (TLS_CLIENT_CA_FILE), API keys bound to a certificate subject (certSubject), and the start-time
 * checks of every TLS setting. Refused clients get a clear error, and no lock reaches Redis.
 */
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import path from 'node:path'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'
import { ConfigError, loadConfig, type ApiKey } from '../../src/config.js'
import { parseSubject, subjectMatches } from '../../src/tls-files.js'

const certs = await makeTlsCerts({ t })
const redis = await startRedis({ t })
const serverFiles = { cert: certs.server.cert, key: certs.server.key }

interface Answer {
  status: number
  body: Record<string, unknown>
}

/** One request over HTTPS with these TLS options; rejects with the client's TLS error. */
function call(base: string, method: string, url: string, tls: https.RequestOptions, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(url, base), { method, headers, agent: false, ...tls }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const lockKeysFor = async (name: string) => Object.keys(await redis.keys()).filter((k) => k.includes(`{${name}}`))

t.test('HTTPS: a client trusting the CA is served; a wrong CA, an expired certificate and plaintext are refused', async (t) => {
  const { app, address, logs } = await startListening(t, [redis.url], { https: serverFiles, logLevel: 'warn' })
  t.match(address, /^https:\/\//)
  const granted = await call(address, 'POST', '/locks/https-ok?ttl=10s', { ca: certs.ca })
  t.equal(granted.status, 201)
  t.equal((await lockKeysFor('https-ok')).length > 0, true, 'the lock is in Redis')

  await t.rejects(call(address, 'POST', '/locks/https-wrong-ca?ttl=10s', { ca: certs.otherCa }), {
    code: /^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT)$/,
  })
  const plaintext = await new Promise<string>((resolve) => {
    const req = http.request(new URL('/locks/https-plain?ttl=10s', address.replace('https:', 'http:')), { method: 'POST' }, (res) =>
      resolve(`answered ${res.statusCode}`),
    )
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    req.end()
  })
  t.match(plaintext, /^(ECONNRESET|HPE_INVALID_CONSTANT|EPIPE)$/, `a plaintext client is cut off (${plaintext})`)
  t.same(await lockKeysFor('https-wrong-ca'), [], 'nothing granted to a client that does not trust the server')
  t.same(await lockKeysFor('https-plain'), [], 'nothing granted to a plaintext client')
  t.ok(
    logs().some((l) => typeof l.msg === 'string' && l.msg.startsWith('TLS handshake refused')),
    'the service logs the refused handshake',
  )
  const counted = await app.metrics.registry.getSingleMetricAsString('http_tls_handshake_failures_total')
  // A client that distrusts the certificate may just hang up (no alert): then the reason is 'other'.
  const total = [...counted.matchAll(/^http_tls_handshake_failures_total\{reason="\w+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0)
  t.equal(total, 2, 'both refused handshakes are counted')
  t.match(counted, /http_tls_handshake_failures_total\{reason="not_tls"\} 1\b/, 'the plaintext client as not_tls')

  const expired = await startListening(t, [redis.url], {
    https: { cert: certs.expiredServer.cert, key: certs.expiredServer.key },
    logLevel: 'silent',
  })
  await t.rejects(call(expired.address, 'POST', '/locks/https-expired?ttl=10s', { ca: certs.ca }), { code: 'CERT_HAS_EXPIRED' })
  t.same(await lockKeysFor('https-expired'), [], 'nothing granted through a service with an expired certificate')
})

t.test('mutual TLS: only certificates from the client CA get through; a key bound to a subject needs that certificate', async (t) => {
  const secret = 'billing-secret-0123456789'
  const key = (name: string, certSubject?: string): ApiKey => ({
    name,
    secretSha256: createHash('sha256')
      .update(secret + name)
      .digest('hex'),
    prefixes: [],
    admin: false,
    ...(certSubject ? { certSubject } : {}),
  })
  const { app, address } = await startListening(t, [redis.url], {
    https: { ...serverFiles, clientCa: certs.ca },
    auth: {
      keys: [
        { ...key('billing', 'CN=billing'), prefixes: ['mtls-'] },
        { ...key('open'), prefixes: ['mtls-'] },
      ],
    },
    logLevel: 'silent',
  })
  const as = (pair: { cert: string; key: string }) => ({ ca: certs.ca, cert: pair.cert, key: pair.key })
  const bearer = (name: string) => ({ authorization: `Bearer ${secret}${name}` })

  const granted = await call(address, 'POST', '/locks/mtls-ok?ttl=10s', as(certs.client), bearer('billing'))
  t.equal(granted.status, 201, 'the bound key with its certificate')
  const other = await call(address, 'POST', '/locks/mtls-open?ttl=10s', as(certs.otherClient), bearer('open'))
  t.equal(other.status, 201, 'an unbound key with any trusted certificate')

  const wrongCert = await call(address, 'POST', '/locks/mtls-stolen?ttl=10s', as(certs.otherClient), bearer('billing'))
  t.equal(wrongCert.status, 403, 'the bound key over another certificate')
  t.match(wrongCert.body, { error: 'forbidden', message: /bound to client certificates with subject CN=billing.*presented CN=other/ })

  for (const [what, tls] of [
    ['no client certificate', { ca: certs.ca }],
    ['a client certificate from another CA (same subject)', as(certs.strangerClient)],
    ['an expired client certificate', as(certs.expiredClient)],
  ] as const) {
    const refused = await call(address, 'POST', '/locks/mtls-stolen?ttl=10s', tls, bearer('billing')).then(
      (a) => `answered ${a.status}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    )
    t.match(refused, /^(ECONNRESET|ERR_SSL_\w+|EPIPE)$/, `${what}: the handshake is refused (${refused})`)
  }
  t.same(await lockKeysFor('mtls-stolen'), [], 'nothing granted to a refused client or the wrong certificate')
  const counted = await app.metrics.registry.getSingleMetricAsString('http_tls_handshake_failures_total')
  t.match(counted, /reason="no_certificate"\} 1\b/, 'the client without a certificate is counted')
})

t.test('TLS settings are checked at start, one line per bad variable', async (t) => {
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env)
    } catch (err) {
      if (err instanceof ConfigError) return [...err.problems]
      throw err
    }
    return []
  }
  const missing = path.join(certs.dir, 'missing.pem')
  const notPem = path.join(certs.dir, 'not-pem.txt')
  writeFileSync(notPem, 'hello')
  t.match(problems({ TLS_CERT_FILE: certs.server.certFile }), [/^TLS_KEY_FILE: is needed with TLS_CERT_FILE/])
  t.match(problems({ TLS_CERT_FILE: certs.server.certFile, TLS_KEY_FILE: certs.client.keyFile }), [
    /^TLS_CERT_FILE: the key file holds the private key of another certificate/,
  ])
  t.match(problems({ TLS_CERT_FILE: certs.expiredServer.certFile, TLS_KEY_FILE: certs.expiredServer.keyFile }), [
    /^TLS_CERT_FILE: .*expired on/,
  ])
  t.match(problems({ TLS_CERT_FILE: missing, TLS_KEY_FILE: notPem }), [
    /^TLS_CERT_FILE: cannot read .*ENOENT/,
    /^TLS_KEY_FILE: .*no PEM private key/,
  ])
  t.match(problems({ TLS_CLIENT_CA_FILE: certs.caFile }), [/^TLS_CLIENT_CA_FILE: client certificates need HTTPS/])
  t.match(problems({ REDIS_TLS_CA_FILE: certs.caFile }), [/^REDIS_TLS_CA_FILE: is only read for TLS links to Redis/])
  t.match(problems({ REDIS_URLS: 'rediss://127.0.0.1:6380', REDIS_TLS_CA_FILE: notPem }), [
    /^REDIS_TLS_CA_FILE: .*holds no PEM certificate/,
  ])
  const authFile = path.join(certs.dir, 'auth.json')
  writeFileSync(authFile, JSON.stringify({ keys: [{ ...key0(), certSubject: 'CN=billing' }] }))
  t.match(problems({ AUTH_FILE: authFile }), [/^AUTH_FILE: key "billing" has a certSubject, which needs client certificates/])
  writeFileSync(authFile, JSON.stringify({ keys: [{ ...key0(), certSubject: 'billing' }] }))
  t.match(problems({ AUTH_FILE: authFile }), [/^AUTH_FILE: .*certSubject must look like "CN=billing"/])

  const good = loadConfig({
    REDIS_URLS: 'rediss://127.0.0.1:6380',
    REDIS_TLS_CA_FILE: certs.caFile,
    REDIS_TLS_CERT_FILE: certs.client.certFile,
    REDIS_TLS_KEY_FILE: certs.client.keyFile,
    TLS_CERT_FILE: certs.server.certFile,
    TLS_KEY_FILE: certs.server.keyFile,
    TLS_CLIENT_CA_FILE: certs.caFile,
  })
  t.same(good.redisTls, { ca: certs.ca, cert: certs.client.cert, key: certs.client.key })
  t.same(good.https, { cert: certs.server.cert, key: certs.server.key, clientCa: certs.ca })
})

t.test('certSubject: every attribute it lists must be in the certificate, with that value', async (t) => {
  const wanted = parseSubject('CN=billing, O=Acme')
  t.same(wanted && [...wanted], [
    ['CN', 'billing'],
    ['O', 'Acme'],
  ])
  t.ok(wanted && subjectMatches(wanted, { CN: 'billing', O: 'Acme', OU: 'payments' }), 'more attributes in the certificate')
  t.notOk(wanted && subjectMatches(wanted, { CN: 'billing' }), 'O missing')
  t.notOk(wanted && subjectMatches(wanted, { CN: 'billing', O: 'Other' }), 'O differs')
  t.ok(wanted && subjectMatches(wanted, { CN: 'billing', O: ['Other', 'Acme'] }), 'one of several values')
  t.equal(parseSubject('billing'), undefined)
  t.equal(parseSubject('CN=billing,'), undefined)
})

function key0() {
  return { name: 'billing', secretSha256: 'a'.repeat(64), prefixes: [], admin: false }
}
