/**
 * touch.lua, the lease renewal a replica sends every second for its waiters on one lock: every entry
 * of ours is renewed to the node's clock plus the lease, its other fields left as they are (a writer,
 * a semaphore's waiter with its permits, either with a lock-delay); ids with no entry, or an entry that
 * is not ours, are not; the reply counts the renewed. Enough waiters that the script reads and writes
 * them in more than one batch.
 */
import t from 'tap'
import type { Redis } from 'ioredis'
import { defaultConfig } from '../../src/config.js'
import { keyCountOf, loadScripts } from '../../src/redis/scripts.js'
import { GONE_MEMORY_MS, lockKeys } from '../../src/locks/keys.js'
import { lostChannel } from '../../src/locks/watch.js'
import { WAITER_LEASE_MS, wakePrefix } from '../../src/locks/waiting.js'
import { startRedis } from '../../harness/redis-server.js'

const PREFIX = 'lr:'
const WAITERS = 2_500

const scripts = loadScripts({
  FENCE_RETENTION_MS: defaultConfig.fenceRetentionMs,
  MAX_READERS: 100,
  MAX_WAITERS: 10_000,
  WAITER_LEASE_MS,
  WAKE_PREFIX: wakePrefix(PREFIX),
  GONE_MEMORY_MS,
  LOST_CHANNEL: lostChannel(PREFIX),
})

async function serverMs(client: Redis): Promise<number> {
  const [s, us] = (await client.time()) as [string | number, string | number]
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}

t.test('a renewal renews every waiter of ours, whatever its kind, and nothing else', async (t) => {
  const server = await startRedis({ t })
  const client = server.client()
  t.teardown(() => client.disconnect())
  for (const name of ['acquire', 'touch'] as const) {
    client.defineCommand(name, { numberOfKeys: keyCountOf(name), lua: scripts.get(name) as string })
  }
  const call = (name: string, keys: string[], args: (string | number)[]) =>
    (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name]?.call(client, ...keys, ...args)
  const keys = lockKeys(PREFIX, 'lock', 'renewed')
  const hint = (Date.now() + 1000) * 1000
  // A live holder, so that nobody in line is handed the lock.
  t.same(((await call('acquire', keys.all.slice(0, 1), ['write', 'holder-0123456789abcdef', 60_000, 'a0', hint])) as number[])[0], 1)

  // Entries as the scripts write them, their leases nearly lapsed: writers, a semaphore's waiters
  // (permits), with and without a lock-delay.
  const old = (await serverMs(client)) + 500
  const shapes = [
    (i: number) => `write|${old}|tok${i}|30000`,
    (i: number) => `permit|${old}|tok${i}|30000|2`,
    (i: number) => `write|${old}|tok${i}|30000||1500`,
    (i: number) => `permit|${old}|tok${i}|20000|3|1500`,
  ]
  const ids = Array.from({ length: WAITERS }, (_, i) => `r1.${i.toString(36)}`)
  const entries = ids.flatMap((id, i) => [id, (shapes[i % shapes.length] as (i: number) => string)(i)])
  await client.hset(keys.waiterInfo, ...entries)
  await client.zadd(keys.waiters, ...ids.flatMap((id, i) => [i + 1, id]))
  // Not ours: an entry in another shape, and ids with no entry at all.
  await client.hset(keys.waiterInfo, 'r1.foreign', 'something else')
  const before = await serverMs(client)
  const renewed = await call('touch', keys.all.slice(0, 1), [hint, ...ids, 'r1.foreign', 'r1.gone1', 'r1.gone2'])
  const after = await serverMs(client)
  t.equal(renewed, WAITERS, 'the reply counts the renewed waiters')

  const stored = (await client.hmget(keys.waiterInfo, ...ids)) as string[]
  let wrong = 0
  for (const [i, entry] of stored.entries()) {
    const [mode, lease, ...rest] = entry.split('|')
    const [wantMode, , ...wantRest] = (shapes[i % shapes.length] as (i: number) => string)(i).split('|')
    const renewedTo = Number(lease) - WAITER_LEASE_MS
    if (mode !== wantMode || rest.join('|') !== wantRest.join('|') || renewedTo < before || renewedTo > after) wrong++
  }
  t.equal(wrong, 0, `every one of the ${WAITERS} entries has a lease from this renewal and its other fields as they were`)
  t.equal(await client.hget(keys.waiterInfo, 'r1.foreign'), 'something else', 'an entry that is not ours is left as it is')
  t.same(await client.hmget(keys.waiterInfo, 'r1.gone1', 'r1.gone2'), [null, null], 'ids with no entry get none')
  t.ok((await client.pttl(keys.waiterInfo)) > WAITER_LEASE_MS, 'the line is kept for twice the lease')
})
