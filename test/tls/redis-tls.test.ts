/**
 * TLS to Redis in every mode, against redis-servers that speak TLS only (`--port 0 --tls-port`) and
 * require a client certificate: rediss:// URLs with REDIS_TLS_* files grant; a wrong CA, an expired
 * server certificate or a missing client certificate is the `tls` reason in /readyz, a 503 for the
 * caller, and no key in Redis. Cluster and Sentinel start-ups are costly: one grant each.
 */
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis, startRedisCluster } from '../../harness/redis-server.js'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'
import { startSentinelSet } from '../../harness/redis-sentinel.js'
import { makeTlsCerts, redisTlsOf } from '../../harness/tls-certs.js'

const certs = await makeTlsCerts({ t })
const serverTls = redisTlsOf(certs)
const trusted = { ca: certs.ca, cert: certs.client.cert, key: certs.client.key }

t.test('single: a rediss:// URL with a CA and a client certificate grants; the lock is in Redis', async (t) => {
  const redis = await startRedis({ t, tls: serverTls })
  t.match(redis.url, /^rediss:\/\//)
  const { app } = await startApp(t, [redis.url], { redisTls: trusted, logLevel: 'silent', nodeTimeoutMs: 2000 })
  const grant = await app.inject({ method: 'POST', url: '/locks/tls-single?ttl=10s' })
  t.equal(grant.statusCode, 201, grant.body)
  t.ok(
    Object.keys(await redis.keys()).some((k) => k.includes('{tls-single}')),
    'the hold is in Redis',
  )

  t.test('refused handshakes: the tls reason, 503, nothing granted', async (t) => {
    const cases = [
      { what: 'a CA that did not sign the server', redisTls: { ...trusted, ca: certs.otherCa }, says: /certificate/i },
      { what: 'no client certificate', redisTls: { ca: certs.ca }, says: /./ },
      { what: 'a client certificate from another CA', redisTls: { ...trusted, ...certs.strangerClient }, says: /./ },
    ]
    for (const { what, redisTls, says } of cases) {
      const { app } = await startApp(t, [redis.url], { redisTls, logLevel: 'silent', nodeTimeoutMs: 300 })
      const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
      t.equal(ready.nodes[0].up, false, `${what}: the node is down`)
      t.match(ready.nodes[0].lastError, { reason: /^(tls|other)$/, message: says }, `${what}: ${ready.nodes[0].lastError?.message}`)
      const refused = await app.inject({ method: 'POST', url: `/locks/tls-refused?ttl=10s` })
      t.equal(refused.statusCode, 503, `${what}: 503`)
      t.equal(refused.json().error, 'backend_unavailable')
    }
    t.notOk(
      Object.keys(await redis.keys()).some((k) => k.includes('{tls-refused}')),
      'no refused lock reached Redis',
    )
  })

  t.test('an expired server certificate is refused by the service', async (t) => {
    const expired = await startRedis({ t, tls: redisTlsOf(certs, certs.expiredServer) })
    const { app } = await startApp(t, [expired.url], { redisTls: trusted, logLevel: 'silent', nodeTimeoutMs: 300 })
    const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
    t.match(ready.nodes[0].lastError, { reason: 'tls', message: /expired/i })
    t.equal((await app.inject({ method: 'POST', url: '/locks/tls-expired?ttl=10s' })).statusCode, 503)
    t.same(await expired.keys(), {}, 'nothing granted')
  })

  t.test('a plaintext redis:// URL to the TLS port: not up, nothing granted', async (t) => {
    const plain = redis.url.replace('rediss:', 'redis:')
    const { app } = await startApp(t, [plain], { logLevel: 'silent', nodeTimeoutMs: 300 })
    const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json()
    t.equal(ready.nodes[0].up, false)
    t.equal((await app.inject({ method: 'POST', url: '/locks/tls-plain?ttl=10s' })).statusCode, 503)
    t.notOk(Object.keys(await redis.keys()).some((k) => k.includes('{tls-plain}')))
  })
})

t.test('quorum: three TLS masters, the grant on each', async (t) => {
  const nodes = await startRedisCluster(3, { t, tls: serverTls })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { redisTls: trusted, logLevel: 'silent', nodeTimeoutMs: 2000 },
  )
  t.equal((await app.inject({ method: 'POST', url: '/locks/tls-quorum?ttl=10s' })).statusCode, 201)
  for (const node of nodes)
    t.ok(
      Object.keys(await node.keys()).some((k) => k.includes('{tls-quorum}')),
      `on ${node.address}`,
    )
})

t.test('cluster: three TLS masters (bus over TLS too), one grant', async (t) => {
  const cluster = await startRedisClusterMode({ t, masters: 3, replicasPerMaster: 0, tls: serverTls })
  const { app } = await startApp(t, cluster.urls, { redisMode: 'cluster', redisTls: trusted, logLevel: 'silent', nodeTimeoutMs: 2000 })
  const grant = await app.inject({ method: 'POST', url: '/locks/tls-cluster?ttl=10s' })
  t.equal(grant.statusCode, 201, grant.body)
  const held = await app.inject({ method: 'GET', url: '/locks/tls-cluster' })
  t.equal(held.statusCode, 200, held.body)
  t.equal(held.json().token, undefined, 'inspect shows no token')
  t.equal(held.json().fence, grant.json().fence, 'inspect over TLS finds the hold')
})

t.test('sentinel: TLS sentinels and a TLS primary, one grant', async (t) => {
  const set = await startSentinelSet({ t, replicas: 0, tls: serverTls })
  t.equal(set.config.tls, true)
  const { app } = await startApp(t, [], {
    redisMode: 'sentinel',
    sentinel: set.config,
    redisTls: trusted,
    logLevel: 'silent',
    nodeTimeoutMs: 2000,
  })
  const grant = await app.inject({ method: 'POST', url: '/locks/tls-sentinel?ttl=10s' })
  t.equal(grant.statusCode, 201, grant.body)
  t.ok(
    Object.keys(await set.primary.keys()).some((k) => k.includes('{tls-sentinel}')),
    'the hold is on the primary',
  )
})
