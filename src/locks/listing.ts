import { fail, ServiceError } from '../errors.js'
import type { Quorum } from '../redis/quorum.js'
import type { RedisNode } from '../redis/node.js'
import type { Namespace } from './keys.js'
import type { LockState } from './types.js'

export interface LockPage {
  keys: { key: string; state: LockState }[]
  /**
   * Where the next page starts ("<node index>.<SCAN cursor>"; a cluster's: "0.<SCAN cursor>.<first
   * slot of the master being scanned>", see src/redis/cluster.ts), null after the last.
   */
  cursor: string | null
}

interface ListingDeps {
  quorum: Quorum
  keyPrefix: string
  /** The majority's view of one lock in the namespace being listed. */
  inspect(key: string): Promise<LockState>
}

/**
 * A page of held locks whose key starts with `prefix`, by SCAN (never KEYS) on one node (the first
 * that answers; later pages stay on it: the cursor names it), each then inspected by majority. A lock
 * is found by its key, a hash or a plain write hold (src/lua/include/plain.lua). A Redis Cluster is
 * one node here, scanned master after master (RedisNode.scanKeys).
 * Scanning stops once `limit` keys are found; a SCAN batch is never split (its cursor would skip the
 * rest), so a page may hold a few more. A key may show on two pages; a lock held only on other nodes
 * is not listed. If a key cannot be inspected, the page fails (503) rather than leave it out.
 */
export async function listLocks(
  deps: ListingDeps,
  namespace: Namespace,
  prefix: string,
  limit: number,
  cursor: string | undefined,
): Promise<LockPage> {
  const dot = cursor?.indexOf('.') ?? -1
  const [nodeIndex, scanCursor] = cursor && dot > 0 ? [cursor.slice(0, dot), cursor.slice(dot + 1)] : [undefined, '0']
  // A new listing may scan any node that answers; a continued one only the node its cursor names.
  const nodes = deps.quorum.nodes
  const candidates = nodeIndex === undefined ? nodes.filter((n) => n.up) : [nodes[Number(nodeIndex)]].filter((n) => n !== undefined)
  for (const node of candidates) {
    try {
      return await scanPage(deps, node, namespace, prefix, limit, scanCursor ?? '0')
    } catch (err) {
      if (err instanceof ServiceError) throw err
      // This node failed mid-scan: a new listing tries the next one.
    }
  }
  throw fail.backendUnavailable(
    nodeIndex === undefined
      ? 'no Redis node answers'
      : `the Redis node this listing was scanning (${nodeIndex}) is down: start the listing again`,
    { nodes: deps.quorum.describe() },
  )
}

async function scanPage(
  deps: ListingDeps,
  node: RedisNode,
  namespace: Namespace,
  prefix: string,
  limit: number,
  scanCursor: string,
): Promise<LockPage> {
  const head = `${deps.keyPrefix}${namespace}:{`
  const found = new Set<string>()
  let next = scanCursor
  for (let round = 0; round < 100 && found.size < limit; round++) {
    const [after, batch] = await node.scanKeys(next, `${head}${prefix}*}`, limit)
    for (const redisKey of batch) found.add(redisKey.slice(head.length, -1))
    next = after
    if (next === '0') break
  }
  const keys = await Promise.all([...found].sort().map(async (key) => ({ key, state: await deps.inspect(key) })))
  return {
    keys: keys.filter((k) => k.state.writer !== null || k.state.readers > 0),
    cursor: next === '0' ? null : `${node.index}.${next}`,
  }
}
