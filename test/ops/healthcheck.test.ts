/**
 * The container's health check (src/healthcheck.ts, the image's HEALTHCHECK) run against real
 * services with the environment each would have: healthy only while /readyz is 200, over plain
 * HTTP, over HTTPS, and through PROBE_PORT when client certificates are required.
 */
import { execFile } from 'node:child_process'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { freePort, startRedis } from '../../harness/redis-server.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'

const script = new URL('../../src/healthcheck.ts', import.meta.url).pathname
const certs = await makeTlsCerts({ t })
const redis = await startRedis({ t })

/** Runs the health check with only these variables (as set in the container): its exit code and stderr. */
function healthcheck(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (err, _out, stderr) => resolve({ code: err ? Number((err as NodeJS.ErrnoException & { code?: unknown }).code ?? 1) : 0, stderr }),
    )
  })
}
const portOf = (address: string) => new URL(address).port

t.test('plain HTTP: healthy while /readyz is 200; unhealthy, with the reason, when nothing listens', async (t) => {
  const { address } = await startListening(t, [redis.url], { logLevel: 'silent' })
  t.same(await healthcheck({ PORT: portOf(address) }), { code: 0, stderr: '' }, 'healthy')
  const nobody = await healthcheck({ PORT: String(await freePort()) })
  t.equal(nobody.code, 1, 'nothing on PORT: unhealthy')
  t.match(nobody.stderr, /^unhealthy: http:\/\/127\.0\.0\.1:\d+\/readyz: .*ECONNREFUSED/)
})

t.test('HTTPS (TLS_CERT_FILE): asked over HTTPS on PORT', async (t) => {
  const { address } = await startListening(t, [redis.url], {
    https: { cert: certs.server.cert, key: certs.server.key },
    logLevel: 'silent',
  })
  t.same(await healthcheck({ PORT: portOf(address), TLS_CERT_FILE: certs.server.certFile }), { code: 0, stderr: '' }, 'healthy')
  const plain = await healthcheck({ PORT: portOf(address) })
  t.equal(plain.code, 1, 'plain HTTP on an HTTPS port is not an answer')
})

t.test('client certificates required: through PROBE_PORT; without it, unhealthy and it says why', async (t) => {
  const own = await startRedis({ t })
  const https = { cert: certs.server.cert, key: certs.server.key, clientCa: certs.ca }
  const { address, probeAddress } = await startListening(t, [own.url], { https, probePort: 0, nodeTimeoutMs: 300, logLevel: 'silent' })
  const env = { PORT: portOf(address), TLS_CERT_FILE: certs.server.certFile, TLS_CLIENT_CA_FILE: certs.caFile }
  t.same(await healthcheck({ ...env, PROBE_PORT: portOf(probeAddress ?? '') }), { code: 0, stderr: '' }, 'healthy through the probe port')
  const without = await healthcheck(env)
  t.equal(without.code, 1)
  t.match(without.stderr, /set PROBE_PORT/, 'the reason names the way out')

  await own.kill()
  const down = await healthcheck({ ...env, PROBE_PORT: portOf(probeAddress ?? '') })
  t.equal(down.code, 1, 'Redis gone: unhealthy (not ready)')
  t.match(down.stderr, /answered 503/)
})
