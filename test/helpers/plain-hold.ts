/**
 * Tests that reach into Redis to change or read one node's copy of a lock: a write hold is kept in the
 * lock's hash, or, as a plain hold, in its fence counter's value ("fence|token|…",
 * src/lua/include/plain.lua).
 */
import type { Redis } from 'ioredis'
import type { LockKeys } from '../../src/locks/keys.js'

/** The fence in a fence counter's value (null: no counter). */
export function counterFence(value: string | null): number | null {
  return value === null ? null : Number(value.split('|')[0])
}

/** Make this node forget the lock's holds, as if it had missed them: its hash, or a plain hold (the counter keeps its fence). */
export async function forgetHold(client: Redis, keys: LockKeys): Promise<void> {
  await client.del(keys.holds)
  const value = await client.get(keys.fence)
  const fence = counterFence(value)
  if (value !== null && String(fence) !== value) await client.set(keys.fence, String(fence), 'KEEPTTL')
}

/** Whether this node has anything of the lock's holds: its hash, or a plain hold (live or lapsed) in its counter. */
export async function hasHold(client: Redis, keys: LockKeys): Promise<boolean> {
  if ((await client.exists(keys.holds)) === 1) return true
  return (await client.get(keys.fence))?.includes('|') ?? false
}
