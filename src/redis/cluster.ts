import { performance } from 'node:perf_hooks'
import { Redis, type Cluster } from 'ioredis'
import type { ClockSample } from './clock.js'
import type { TlsFiles } from '../tls-files.js'
import { tlsOptionsOf } from './topology.js'
import { guardSockets } from './socket-guard.js'

/**
 * What the service needs of a Redis Cluster beyond routing a script to the master of its slot
 * (which ioredis does): the masters in a stable order, a listing cursor that survives a page, one
 * clock sample per master, and a readable check of the seeds at start.
 */

/** One master of the cluster, named by the first slot it serves (which survives its failover). */
export interface ClusterMaster {
  firstSlot: number
  /** "host:port" */
  address: string
  redis: Redis
}

/** The masters serving slots now, ordered by their first slot. */
export function clusterMasters(cluster: Cluster): ClusterMaster[] {
  const firstSlot = new Map<string, number>()
  const slots = cluster.slots
  for (let slot = 0; slot < slots.length; slot++) {
    const owner = slots[slot]?.[0]
    if (owner !== undefined && !firstSlot.has(owner)) firstSlot.set(owner, slot)
  }
  const masters: ClusterMaster[] = []
  for (const redis of cluster.nodes('master')) {
    const address = `${redis.options.host}:${redis.options.port}`
    const slot = firstSlot.get(address)
    if (slot !== undefined) masters.push({ firstSlot: slot, address, redis })
  }
  return masters.sort((a, b) => a.firstSlot - b.firstSlot)
}

/**
 * One SCAN step across the whole cluster: master after master, in the order of their first slot.
 * The cursor is `<SCAN cursor>.<first slot of the master being scanned>` ('0': start; '0' back: done);
 * it names the master by a slot, not an address, so it survives that master failing over (the
 * promoted replica serves the same slots; SCAN on another server may repeat or skip a few keys).
 */
export async function scanCluster(cluster: Cluster, cursor: string, pattern: string, count: number): Promise<[string, string[]]> {
  const masters = clusterMasters(cluster)
  if (masters.length === 0) throw new Error('Connection is closed: no cluster master is known')
  const [scanCursor = '0', slotText] = cursor.split('.')
  const slot = slotText === undefined ? 0 : Number(slotText)
  // The master named by the cursor; if none starts at that slot any more (a failover keeps it, a
  // resharding may not), the master serving the slot now, or the next one, from the start of its SCAN.
  const named = masters.findIndex((m) => m.firstSlot === slot)
  const owner = cluster.slots[slot]?.[0]
  const serving = masters.findIndex((m) => m.address === owner)
  const at = named >= 0 ? named : serving >= 0 ? serving : masters.findIndex((m) => m.firstSlot >= slot)
  const master = masters[at]
  if (master === undefined) return ['0', []]
  const [next, keys] = await master.redis.scan(named >= 0 ? scanCursor : '0', 'MATCH', pattern, 'COUNT', count)
  if (next !== '0') return [`${next}.${master.firstSlot}`, keys]
  const following = masters[at + 1]
  return [following ? `0.${following.firstSlot}` : '0', keys]
}

/** One TIME sample per master (for the clock check), by shard (masters in first-slot order); undefined: no answer. */
export async function sampleMasterClocks(cluster: Cluster): Promise<{ shard: number; address: string; sample: ClockSample | undefined }[]> {
  const masters = clusterMasters(cluster)
  return Promise.all(
    masters.map(async ({ address, redis }, shard) => {
      const sentAt = performance.now()
      try {
        const [s, us] = (await redis.time()) as unknown as [string, string]
        return { shard, address, sample: { sentAt, receivedAt: performance.now(), nodeMs: Number(s) * 1000 + Number(us) / 1000 } }
      } catch {
        return { shard, address, sample: undefined }
      }
    }),
  )
}

/**
 * REDIS_MODE=cluster: every seed that answers must have cluster support enabled. Returns one
 * readable line per seed that is not a cluster node (nothing for seeds that do not answer: the
 * connection error says why).
 */
export async function checkClusterSeeds(seeds: readonly string[], timeoutMs: number, tls?: TlsFiles | null): Promise<string[]> {
  const problems = await Promise.all(
    seeds.map(async (url) => {
      const info = await infoOf(url, timeoutMs, 'cluster', tls)
      if (info === undefined || /^cluster_enabled:1/m.test(info)) return []
      const u = new URL(url)
      return [`REDIS_MODE=cluster, but ${u.hostname}:${u.port || '6379'} has cluster support disabled (cluster_enabled:0)`]
    }),
  )
  return problems.flat()
}

/** INFO <section> of one URL, or undefined if it does not answer in time. */
export async function infoOf(url: string, timeoutMs: number, section: string, tls?: TlsFiles | null): Promise<string | undefined> {
  const probe = guardSockets(
    new Redis(url, {
      ...(url.startsWith('rediss:') ? { tls: tlsOptionsOf(tls) } : {}),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: true,
      retryStrategy: () => null,
      connectTimeout: Math.max(timeoutMs, 1000),
      commandTimeout: Math.max(timeoutMs, 1000),
    }),
  )
  probe.on('error', () => undefined)
  try {
    await probe.connect()
    return await probe.info(section)
  } catch {
    return undefined
  } finally {
    probe.disconnect()
  }
}
