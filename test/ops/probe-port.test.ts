/**
 * PROBE_PORT: plain HTTP beside a main port that requires client certificates, for the kubelet's
 * probes and a scrape. It answers /healthz, /readyz and /metrics as the main port would (readiness
 * follows Redis), and nothing else: no lock can be reached through it.
 */
import https from 'node:https'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { freePort, startRedis } from '../../harness/redis-server.js'
import { startService } from '../../harness/service-process.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'

const certs = await makeTlsCerts({ t })

/** One plain HTTP request: status, content type and body text. */
async function plain(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, base), { method, headers })
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
}

t.test('with client certificates required: the kubelet (no certificate) probes through PROBE_PORT only', async (t) => {
  const redis = await startRedis({ t })
  const { address, probeAddress } = await startListening(t, [redis.url], {
    https: { cert: certs.server.cert, key: certs.server.key, clientCa: certs.ca },
    probePort: 0,
    nodeTimeoutMs: 300,
    logLevel: 'silent',
  })
  if (!probeAddress) throw new Error('no probe port')
  t.match(probeAddress, /^http:\/\/127\.0\.0\.1:\d+$/)

  const mainPort = await new Promise<string>((resolve) => {
    const req = https.request(new URL('/readyz', address), { ca: certs.ca, agent: false }, (res) => resolve(`answered ${res.statusCode}`))
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    req.end()
  })
  t.match(mainPort, /^(ECONNRESET|ERR_SSL_\w+|EPIPE)$/, `the main port refuses a client without a certificate (${mainPort})`)

  const healthz = await plain(probeAddress, 'GET', '/healthz')
  t.equal(healthz.status, 200, '/healthz')
  const ready = await plain(probeAddress, 'GET', '/readyz')
  t.equal(ready.status, 200, '/readyz')
  t.match(JSON.parse(ready.text), { nodes: [{ up: true, vote: 'counts' }] }, 'the same answer as the main port')
  const head = await plain(probeAddress, 'HEAD', '/readyz')
  t.same([head.status, head.text], [200, ''], 'HEAD: the status, no body')
  const metrics = await plain(probeAddress, 'GET', '/metrics')
  t.equal(metrics.status, 200)
  t.match(metrics.type, /^text\/plain/)
  t.match(metrics.text, /^redis_node_up\{node="0"\} 1$/m, 'the scrape')

  for (const [method, path] of [
    ['POST', '/locks/through-probes'],
    ['GET', '/locks/through-probes'],
    ['DELETE', '/locks/through-probes'],
    ['POST', '/readyz'],
    ['GET', '/docs'],
    ['GET', '/openapi.json'],
  ] as const) {
    const res = await plain(probeAddress, method, path)
    t.equal(res.status, 404, `${method} ${path}: 404`)
    t.match(JSON.parse(res.text), { error: 'route_not_found' })
  }
  t.same(
    Object.keys(await redis.keys()).filter((k) => k.includes('through-probes')),
    [],
    'nothing reached Redis',
  )

  // Readiness is the service's own, not a canned answer: Redis gone, not ready.
  await redis.kill()
  const down = await plain(probeAddress, 'GET', '/readyz')
  t.equal(down.status, 503, '/readyz: 503 once Redis is gone')
  t.equal((await plain(probeAddress, 'GET', '/healthz')).status, 200, '/healthz: still alive')
})

t.test('the real service: PROBE_PORT listens beside PORT, and closes after the drain', async (t) => {
  const redis = await startRedis({ t })
  const probePort = await freePort()
  const service = await startService({ REDIS_URLS: redis.url, PROBE_PORT: String(probePort) }, { t })
  const probes = `http://127.0.0.1:${probePort}`
  t.equal((await plain(probes, 'GET', '/readyz')).status, 200, '/readyz on the probe port')
  t.equal((await plain(probes, 'POST', '/locks/real-probe')).status, 404, 'no lock through it')
  t.equal((await plain(service.url, 'POST', '/locks/real-probe')).status, 201, 'the main port grants as before')
  t.equal(await service.stop('SIGTERM'), 0, 'exit 0')
  const after = await plain(probes, 'GET', '/healthz').then(
    (r) => `answered ${r.status}`,
    (err: Error & { cause?: NodeJS.ErrnoException }) => err.cause?.code ?? err.message,
  )
  t.equal(after, 'ECONNREFUSED', 'the probe port is closed once the service has stopped')
})
