import { scanCluster } from './cluster.js'
import { isCluster, type RedisClient } from './topology.js'

/** What a node offers beyond scripts: a channel to listen on, and the keys to list. */

export interface Subscription {
  /** Settles once the node has confirmed the subscription (pushes published before that are lost), or it failed. */
  readonly subscribed: Promise<void>
  close(): Promise<void>
}

/**
 * A connection of its own listening on `channel` (pub/sub takes a connection over). It resubscribes
 * by itself after a reconnect; pushes sent meanwhile are lost, so `onReconnect` tells the caller.
 */
export function subscribe(
  client: RedisClient,
  channel: string,
  onMessage: (message: string) => void,
  onReconnect: () => void,
): Subscription {
  // Classic SUBSCRIBE, also in a cluster: a PUBLISH on any node reaches the subscribers of every
  // node (the cluster bus), so a replica needs one subscription whatever slot a lock lives in.
  const sub: RedisClient = isCluster(client)
    ? client.duplicate(undefined, {
        enableOfflineQueue: true,
        redisOptions: { ...client.options.redisOptions, commandTimeout: undefined, autoResendUnfulfilledCommands: true },
      })
    : // Not ioredis' own re-SUBSCRIBE after a reconnect: it drops that command's promise (a connection
      // lost before the answer rejects it unhandled, which ends the process) and then forgets the
      // channel for good. This one subscribes again on every reconnect, its promise handled.
      client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResendUnfulfilledCommands: true, autoResubscribe: false })
  sub.on('error', () => undefined)
  sub.on('message', (_channel: string, message: string) => onMessage(message))
  const subscribeNow = () =>
    sub.subscribe(channel).then(
      () => undefined,
      () => undefined,
    )
  let connectedBefore = false
  sub.on('ready', () => {
    if (connectedBefore) {
      if (!isCluster(sub)) void subscribeNow()
      onReconnect()
    }
    connectedBefore = true
  })
  const subscribed = subscribeNow()
  // A subscriber that never got ready (e.g. on a port that accepts and never answers) would queue QUIT forever.
  return {
    subscribed,
    close: () =>
      sub.status === 'ready'
        ? sub.quit().then(
            () => undefined,
            () => sub.disconnect(),
          )
        : Promise.resolve(sub.disconnect()),
  }
}

/** Settles once every one of `subscriptions` is confirmed (or failed). */
export function allSubscribed(subscriptions: readonly Subscription[]): Promise<void> {
  return Promise.all(subscriptions.map((s) => s.subscribed)).then(() => undefined)
}

/**
 * One SCAN step over the keys matching `pattern` (of any type: a lock's key is a hash or a plain
 * hold's string): the next cursor and the keys found. A cluster is scanned master after master (the
 * cursor names the master: src/redis/cluster.ts).
 */
export function scanKeys(client: RedisClient, cursor: string, pattern: string, count: number): Promise<[string, string[]]> {
  if (isCluster(client)) return scanCluster(client, cursor, pattern, count)
  return client.scan(cursor, 'MATCH', pattern, 'COUNT', count)
}
