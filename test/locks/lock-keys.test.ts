/**
 * A lock script is sent one key, the lock's hash, and names the others itself
 * (src/lua/include/lock_keys.lua): its names must be those src/locks/keys.ts gives the same lock, or a
 * script would read and write keys nobody else knows.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { electionKeys, lockKeys } from '../../src/locks/keys.js'
import { keyCountOf, loadScripts, scriptNames } from '../../src/redis/scripts.js'
import { startRedis } from '../../harness/redis-server.js'

const include = readFileSync(new URL('../../src/lua/include/lock_keys.lua', import.meta.url), 'utf8')

t.test("the keys a lock script names are src/locks/keys.ts's", async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  for (const [namespace, key] of [
    ['lock', 'orders.42'],
    ['rw', 'a:b@c=d+e_f-g'],
    ['sem', 'x'],
  ] as const) {
    const keys = lockKeys('p:', namespace, key)
    const named = (await client.eval(`${include}\nreturn KEYS`, 1, keys.holds)) as string[]
    t.same(named.slice(0, keys.all.length), keys.all, `${namespace} ${key}`)
  }
  const election = electionKeys('p:', 'leader')
  t.same(await client.eval(`${include}\nreturn KEYS`, 1, election.hold.holds), election.all, 'an election: its hold and its hash')
})

t.test('every lock script is sent one key', async (t) => {
  loadScripts({
    FENCE_RETENTION_MS: 1000,
    MAX_READERS: 1,
    MAX_WAITERS: 1,
    WAITER_LEASE_MS: 1000,
    WAKE_PREFIX: 'p:',
    GONE_MEMORY_MS: 1,
    LOST_CHANNEL: 'p:',
  })
  const sessionScripts = scriptNames.filter((name) => name.startsWith('session') || name === 'key_sessions' || name === 'sessions_index')
  for (const name of scriptNames) {
    if (sessionScripts.includes(name)) continue
    t.equal(keyCountOf(name), 1, name)
  }
})
