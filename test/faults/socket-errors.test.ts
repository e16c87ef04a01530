/**
 * A refused TLS handshake can raise two 'error' events on one socket: the client rejects the server's
 * certificate, then the server's alert arrives ("tlsv1 alert decode error"; seen in CI with an expired
 * server certificate). ioredis listens with `once`, and an 'error' nobody listens to ends the process.
 * Every socket of the service's clients (src/redis/socket-guard.ts), and of the clients duplicated from
 * them (the push subscriptions), must survive further errors.
 */
import type { Duplex } from 'node:stream'
import type { Redis } from 'ioredis'
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { makeTlsCerts, redisTlsOf } from '../../harness/tls-certs.js'
import type { RedisClient } from '../../src/redis/topology.js'
import { until } from '../helpers/until.js'

const socketOf = (client: RedisClient) => (client as unknown as { stream?: Duplex }).stream

t.test('an expired server certificate: further errors on a refused socket do not end the process', async (t) => {
  const certs = await makeTlsCerts({ t })
  const redis = await startRedis({ t, tls: redisTlsOf(certs, certs.expiredServer) })
  const trusted = { ca: certs.ca, cert: certs.client.cert, key: certs.client.key }
  const { app } = await startApp(t, [redis.url], { redisTls: trusted, logLevel: 'silent', nodeTimeoutMs: 300 })
  const node = app.quorum.nodes[0]!
  await until(async () => node.status().lastError?.reason === 'tls', 'the handshake refused')

  // As the push subscriptions are made (src/redis/pubsub-scan.ts): a duplicate, connecting on its first command.
  const copy = (node.client as Redis).duplicate({ enableOfflineQueue: true })
  t.teardown(() => copy.disconnect())
  let refusals = 0
  copy.on('error', () => refusals++)
  copy.ping().catch(() => undefined)
  await until(async () => refusals > 0 && socketOf(copy) !== undefined, 'the duplicate refused too')

  for (const [what, client] of [
    ['the node connection', node.client],
    ['a connection duplicated from it', copy],
  ] as const) {
    const socket = socketOf(client)
    t.ok(socket, `${what} has had a socket`)
    // Whatever ioredis still listens for is used up by the first; the second is the one that killed CI.
    socket!.emit('error', new Error('the server alert after the refused handshake'))
    socket!.emit('error', new Error('and one more'))
    t.pass(`${what}: the process is still running`)
  }
  const refused = await app.inject({ method: 'POST', url: '/locks/after-errors?ttl=10s' })
  t.equal(refused.statusCode, 503, 'the service still answers, 503 as before')
})
