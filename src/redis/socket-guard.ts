import type { Duplex } from 'node:stream'
import type { Cluster, Redis } from 'ioredis'

/**
 * ioredis listens for its socket's 'error' with `once`, so a second error on the same socket has no
 * listener, and an 'error' event without one ends the process. A refused TLS handshake can give two:
 * the client rejects the server's certificate (an expired one, say), then the server's alert arrives
 * ("tlsv1 alert decode error"). So every socket a guarded client opens gets a listener of its own;
 * ioredis still sees the first error, and reconnects as before.
 *
 * `connector` is a private member of ioredis (pinned: test/internals/private-apis.test.ts). The client
 * must not have connected yet (lazyConnect): its first socket is opened by its first connect.
 */
export function guardSockets(client: Redis): Redis {
  const connector = (client as unknown as { connector: { connect(...args: unknown[]): Promise<Duplex> } }).connector
  const connect = connector.connect.bind(connector)
  connector.connect = (...args: unknown[]) =>
    connect(...args).then((socket) => {
      socket.on('error', ignore)
      return socket
    })
  return client
}

/** Every node connection of a Redis Cluster client, as the cluster creates it (before it connects). */
export function guardClusterSockets(cluster: Cluster): Cluster {
  cluster.on('+node', (node: Redis) => guardSockets(node))
  return cluster
}

function ignore(): void {}
