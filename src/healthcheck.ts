/**
 * The container's health check (Dockerfile HEALTHCHECK, docker-compose): exit 0 when the service on
 * this host answers /readyz with 200 (a majority of its Redis nodes answers and may vote), else 1 with
 * the reason on stderr. It reads the service's own environment to find it: the probe port when
 * PROBE_PORT is set (plain HTTP, the one way in for a client without a certificate when
 * TLS_CLIENT_CA_FILE requires one), else PORT, over HTTPS when TLS_CERT_FILE is set. It does not
 * check the service's certificate: it asks its own process over loopback, where the name in the
 * certificate is not 127.0.0.1. Plain environment reads, no config module: it runs every few seconds.
 */
import http from 'node:http'
import https from 'node:https'

const TIMEOUT_MS = 2000

function fail(reason: string): never {
  process.stderr.write(`unhealthy: ${reason}\n`)
  process.exit(1)
}

const env = process.env
const probePort = env.PROBE_PORT?.trim() || undefined
const secure = probePort === undefined && Boolean(env.TLS_CERT_FILE?.trim())
const port = Number(probePort ?? (env.PORT?.trim() || '8080'))
if (!Number.isInteger(port) || port <= 0) fail(`no port to ask (PORT ${env.PORT ?? 'unset'}, PROBE_PORT ${env.PROBE_PORT ?? 'unset'})`)
if (secure && env.TLS_CLIENT_CA_FILE?.trim()) fail('client certificates are required on PORT: set PROBE_PORT for probes')

const target = `${secure ? 'https' : 'http'}://127.0.0.1:${port}/readyz`
const options = { timeout: TIMEOUT_MS, ...(secure ? { rejectUnauthorized: false } : {}) }
const req = (secure ? https : http).get(target, options, (res) => {
  res.resume()
  if (res.statusCode === 200) process.exit(0)
  fail(`${target} answered ${res.statusCode}`)
})
req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)))
req.on('error', (err) => fail(`${target}: ${err.message}`))
