import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis'
import type { ConnectionOptions } from 'node:tls'
import type { TlsFiles } from '../tls-files.js'
import { guardClusterSockets, guardSockets } from './socket-guard.js'

/**
 * Where the service's Redis lives (REDIS_MODE). Every topology is seen by the engine as voters of one
 * quorum (src/redis/quorum.ts):
 * - `standalone`: each URL is one independent master: 1 = single mode, 3/5/7 = a Redlock quorum.
 * - `cluster`: the URLs are seeds of ONE Redis Cluster; the cluster is one voter (a quorum of one).
 *   Each lock lives in the slot of its hash tag, so each script runs on the master owning that slot;
 *   ioredis follows MOVED/ASK and refreshes the slot map after a failover.
 * - `sentinel`: Sentinel names the current primary; the primary is one voter (a quorum of one), and
 *   the client asks the sentinels again after a failover.
 */
export type Topology = (
  | { mode: 'standalone'; url: string }
  | { mode: 'cluster'; seeds: readonly string[] }
  | {
      mode: 'sentinel'
      sentinels: readonly SentinelAddress[]
      name: string
      /** AUTH for the primary and replicas (REDIS_PASSWORD), and for the sentinels (REDIS_SENTINEL_PASSWORD). */
      password: string | undefined
      sentinelPassword: string | undefined
      /** TLS to the sentinels and the data nodes (REDIS_SENTINELS given as rediss://…). */
      tls: boolean
    }
) & {
  /** REDIS_TLS_*: the CA and client certificate of rediss:// links (unset: the system's CAs, no certificate). */
  tlsFiles?: TlsFiles | null
}

export interface SentinelAddress {
  host: string
  port: number
}

export type RedisClient = Redis | Cluster

/** What every connection shares, whatever the topology: fail fast, never resend, bounded commands. */
export interface ClientSettings {
  timeoutMs: number
  /** ioredis' own batching of the commands sent in one turn of the event loop: for the bench's comparison only. */
  autoPipelining?: boolean
}

/** "host:port" that logs, metrics and bodies may show for this topology (never a password). */
export function topologyAddress(topology: Topology): string {
  if (topology.mode === 'standalone') return hostPort(topology.url)
  if (topology.mode === 'cluster') return hostPort(topology.seeds[0] ?? 'redis://127.0.0.1:6379')
  const first = topology.sentinels[0]
  return first ? `${first.host}:${first.port}` : 'sentinel'
}

/**
 * What error messages must never show: every password the topology carries, as written in its URL
 * and decoded, however short. A username is not among them: it is no credential, Redis itself names
 * it in its ACL errors, and an operator needs it there to fix the user's rights.
 */
export function topologySecrets(topology: Topology): string[] {
  if (topology.mode === 'standalone') return urlSecrets(topology.url)
  if (topology.mode === 'cluster') return topology.seeds.flatMap(urlSecrets)
  return [topology.password, topology.sentinelPassword].filter((s): s is string => s !== undefined && s !== '')
}

function urlSecrets(url: string): string[] {
  const { password } = new URL(url)
  let decoded = password
  try {
    decoded = decodeURIComponent(password)
  } catch {
    // A stray % in the password: only its written form can show up.
  }
  return [...new Set([password, decoded])].filter((s) => s !== '')
}

function hostPort(url: string): string {
  const u = new URL(url)
  return `${u.hostname}:${u.port || '6379'}`
}

/** The per-connection options of every data connection (the ones scripts run on). */
function connectionOptions(settings: ClientSettings): RedisOptions {
  return {
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: settings.timeoutMs,
    connectTimeout: Math.max(settings.timeoutMs, 1000),
    // Connected by connectedNow once guarded (src/redis/socket-guard.ts); a cluster's nodes are lazy anyway.
    lazyConnect: true,
    ...(settings.autoPipelining ? { enableAutoPipelining: true } : {}),
  }
}

/** ioredis' `tls` option for a rediss:// link: the CA and client certificate of REDIS_TLS_*, if given. */
export function tlsOptionsOf(files: TlsFiles | null | undefined): ConnectionOptions {
  return { ...(files?.ca ? { ca: files.ca } : {}), ...(files?.cert && files.key ? { cert: files.cert, key: files.key } : {}) }
}

export function createClient(topology: Topology, settings: ClientSettings): RedisClient {
  const retryStrategy = (times: number) => Math.min(50 * times, 1000)
  const tls = tlsOptionsOf(topology.tlsFiles)
  if (topology.mode === 'standalone') {
    return connectedNow(
      new Redis(topology.url, {
        ...connectionOptions(settings),
        enableOfflineQueue: false,
        retryStrategy,
        // Without an explicit tls option ioredis would still use TLS for rediss://, but with Node's CAs only.
        ...(topology.url.startsWith('rediss:') ? { tls } : {}),
      }),
    )
  }
  if (topology.mode === 'sentinel') {
    const client = new Redis({
      ...connectionOptions(settings),
      enableOfflineQueue: false,
      retryStrategy,
      sentinels: topology.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: topology.name,
      role: 'master',
      ...(topology.password ? { password: topology.password } : {}),
      ...(topology.sentinelPassword ? { sentinelPassword: topology.sentinelPassword } : {}),
      ...(topology.tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
      sentinelRetryStrategy: (times: number) => Math.min(100 * times, 1000),
      sentinelCommandTimeout: settings.timeoutMs,
    })
    return connectedNow(client)
  }
  const seeds = topology.seeds.map((url) => new URL(url))
  const first = seeds[0]
  const nodes: ClusterNode[] = seeds.map((u) => ({ host: u.hostname, port: Number(u.port || 6379) }))
  const cluster = new Cluster(nodes, {
    lazyConnect: true,
    ...(settings.autoPipelining ? { enableAutoPipelining: true } : {}),
    enableOfflineQueue: false,
    enableReadyCheck: true,
    scaleReads: 'master',
    // MOVED / ASK / TRYAGAIN / CLUSTERDOWN: retried inside the node timeout (commands that were refused
    // ran nowhere, so retrying them cannot grant twice).
    maxRedirections: 16,
    retryDelayOnMoved: 0,
    retryDelayOnTryAgain: 20,
    retryDelayOnClusterDown: 50,
    retryDelayOnFailover: 50,
    slotsRefreshTimeout: Math.max(settings.timeoutMs, 1000),
    slotsRefreshInterval: 2000,
    clusterRetryStrategy: retryStrategy,
    redisOptions: {
      ...connectionOptions(settings),
      ...(first?.username ? { username: decodeURIComponent(first.username) } : {}),
      ...(first?.password ? { password: decodeURIComponent(first.password) } : {}),
      ...(first?.protocol === 'rediss:' ? { tls } : {}),
    },
  })
  return connectedNow(cluster)
}

/** A client made with lazyConnect, guarded (src/redis/socket-guard.ts), then connecting at once. */
function connectedNow<T extends RedisClient>(client: T): T {
  guarded(client)
  client.connect().catch(() => undefined) // its failures come as 'error' events and failed commands
  return client
}

/** The client's sockets, and those of every client duplicated from it, have an 'error' listener of their own. */
function guarded<T extends RedisClient>(client: T): T {
  if (client instanceof Cluster) guardClusterSockets(client)
  else guardSockets(client)
  alsoForDuplicates(client, guarded)
  return client
}

/** Applies `apply` to every client duplicated from `client`, as it is made (apply it again there to reach their copies). */
export function alsoForDuplicates<T extends RedisClient>(client: T, apply: (copy: T) => unknown): void {
  const duplicate = client.duplicate.bind(client) as (...args: unknown[]) => T
  ;(client as unknown as { duplicate: (...args: unknown[]) => T }).duplicate = (...args: unknown[]) => {
    const copy = duplicate(...args)
    apply(copy)
    return copy
  }
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster
}
