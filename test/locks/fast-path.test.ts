/**
 * The scripts' fast paths (src/lua/acquire.lua, release.lua and renew.lua, between `--@fast-path` and
 * `--@end-fast-path`) must do exactly what the general path below them does. Two redis-servers get
 * the same sequence of script calls, one with the scripts as shipped, one with the fast paths cut
 * out; every reply and every lock state left behind must match (time-dependent values within a
 * second: the two servers run the calls a few ms apart). A fast path may keep a plain write hold
 * (the lock's key a string: src/lua/include/plain.lua) where the general path keeps the hash: the dump
 * reads it as the hash it stands for (what `promote` makes of it).
 */
import t from 'tap'
import type { Redis } from 'ioredis'
import { setTimeout as sleep } from 'node:timers/promises'
import { defaultConfig } from '../../src/config.js'
import { keyCountOf, loadScripts, type ScriptName } from '../../src/redis/scripts.js'
import { GONE_MEMORY_MS, lockKeys, type Namespace } from '../../src/locks/keys.js'
import { lostChannel } from '../../src/locks/watch.js'
import { WAITER_LEASE_MS, wakePrefix } from '../../src/locks/waiting.js'
import { startRedis } from '../../harness/redis-server.js'

const PREFIX = 'fp:'
const FAST_PATH = /^--@fast-path$[\s\S]*?^--@end-fast-path$/gm

const shipped = loadScripts({
  FENCE_RETENTION_MS: defaultConfig.fenceRetentionMs,
  MAX_READERS: 100,
  MAX_WAITERS: 100,
  WAITER_LEASE_MS,
  WAKE_PREFIX: wakePrefix(PREFIX),
  GONE_MEMORY_MS,
  LOST_CHANNEL: lostChannel(PREFIX),
})
const general = new Map([...shipped].map(([name, lua]) => [name, lua.replace(FAST_PATH, '')]))

type Reply = number[]
type Call = (script: string, ns: Namespace, key: string, args: (string | number)[]) => Promise<Reply>

function caller(client: Redis, scripts: ReadonlyMap<ScriptName, string>): Call {
  for (const [name, lua] of scripts) client.defineCommand(name, { numberOfKeys: keyCountOf(name), lua })
  const commands = client as unknown as Record<string, (...args: (string | number)[]) => Promise<Reply>>
  return (script, ns, key, args) => {
    const command = commands[script]
    if (!command) throw new Error(`no script ${script}`)
    return command.call(client, ...lockKeys(PREFIX, ns, key).all.slice(0, keyCountOf(script as ScriptName)), ...args)
  }
}

type Dump = Record<string, { type: string; pttl: number; value: unknown }>

/** Every key: type, TTL (ms, -1 none) and contents, time fields as numbers to compare within a tolerance. */
async function dump(client: Redis): Promise<Dump> {
  const out: Dump = {}
  for (const key of (await client.keys('*')).sort()) {
    const type = await client.type(key)
    const pttl = await client.pttl(key)
    const value =
      type === 'hash' ? await client.hgetall(key) : type === 'zset' ? await client.zrange(key, 0, -1, 'WITHSCORES') : await client.get(key)
    out[key] = { type, pttl, value }
  }
  return readPlainHolds(out, await serverMs(client))
}

async function serverMs(client: Redis): Promise<number> {
  const [s, us] = (await client.time()) as [string | number, string | number]
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}

/**
 * A lock's key holding a plain hold ("fence|token|ttl|attempt", a string whose TTL is the hold's) read
 * as the hash the general path keeps (include/plain.lua's promote).
 */
function readPlainHolds(keys: Dump, now: number): Dump {
  for (const [key, entry] of Object.entries(keys)) {
    const match = entry.type === 'string' && !key.endsWith(':fence') ? /^(\d+)\|([^|]*)\|(\d+)\|(.*)$/.exec(entry.value as string) : null
    if (!match) continue
    const [, fence, token, ttl, attempt] = match as unknown as string[]
    const value = { w: token, wf: fence, wc: '1', wt: ttl, we: String(now + entry.pttl), wa: attempt, wac: '0' }
    keys[key] = { type: 'hash', pttl: entry.pttl, value }
  }
  return keys
}

/** Clock readings (ms or µs since 1970) and TTLs may differ by up to a second between the two servers. */
const slack = (n: number) => (Math.abs(n) >= 1e15 ? 1e6 : 1000)

/** Equal, but for numbers (also inside strings, e.g. a waiter's lease) that differ by less than `slack`. */
function close(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= slack(a)
  if (typeof a === 'string' && typeof b === 'string') {
    const pa = a.split(/(\d{4,})/)
    const pb = b.split(/(\d{4,})/)
    return pa.length === pb.length && pa.every((p, i) => (i % 2 === 1 ? close(Number(p), Number(pb[i])) : p === pb[i]))
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => close(v, b[i]))
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort()
    const kb = Object.keys(b).sort()
    return close(ka, kb) && ka.every((k) => close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  }
  return a === b
}

t.test('the fast paths answer and leave exactly what the general path does', async (t) => {
  const [fastServer, generalServer] = await Promise.all([startRedis({ t }), startRedis({ t })])
  const fastClient = fastServer.client()
  const generalClient = generalServer.client()
  t.teardown(() => {
    fastClient.disconnect()
    generalClient.disconnect()
  })
  const fast = caller(fastClient, shipped)
  const slow = caller(generalClient, general)
  // A fence hint 10 s ahead of both servers' clocks: both propose the same fences.
  const hint = (Date.now() + 10_000) * 1000
  const A = 'tokenA-0123456789abcdef'
  const B = 'tokenB-0123456789abcdef'
  let attempt = 0
  const acquire = (mode: string, token: string, ttl: number, opts: { reentrant?: boolean; waiter?: string; keepTtl?: boolean } = {}) => [
    mode,
    token,
    ttl,
    `att${++attempt}`,
    hint,
    opts.reentrant ? 1 : '',
    opts.waiter ?? '',
    '',
    opts.keepTtl ? 1 : '',
  ]
  /** `replica`: the caller's replica id, whose waiters' pushes come back in the reply. */
  const release = (mode: string, token: string, replica?: string) => (replica ? [mode, token, hint, replica] : [mode, token, hint])

  const both = async (what: string, script: string, ns: Namespace, key: string, args: (string | number)[]) => {
    const [a, b] = await Promise.all([fast(script, ns, key, args), slow(script, ns, key, args)])
    t.ok(close(a, b), `${what}: same reply (fast path ${JSON.stringify(a)}, general ${JSON.stringify(b)})`)
    if (script === 'acquire' && (a[0] ?? 0) > 0) t.equal(a[1], b[1], `${what}: the same fence`)
    const [da, db] = await Promise.all([dump(fastClient), dump(generalClient)])
    t.ok(close(da, db), `${what}: same keys left`, { fast: da, general: db })
    return a
  }

  // The common case: a new exclusive lock, refused to another token, released.
  t.equal((await both('new lock', 'acquire', 'lock', 'k1', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('held: 409', 'acquire', 'lock', 'k1', acquire('write', B, 30_000)))[0], -1)
  t.equal((await both('held: 409 to a waiter', 'acquire', 'lock', 'k1', acquire('write', B, 30_000, { waiter: 'r1.1' })))[0], -1)
  t.equal((await both('re-acquire', 'acquire', 'lock', 'k1', acquire('write', A, 20_000, { keepTtl: true })))[0], 2)
  t.equal((await both('reentrant', 'acquire', 'lock', 'k1', acquire('write', A, 20_000, { reentrant: true })))[0], 2)
  t.equal((await both('release one of two', 'release', 'lock', 'k1', release('write', A)))[0], 2)
  t.equal((await both('not owner', 'release', 'lock', 'k1', release('write', B)))[0], -3)
  t.equal((await both('release the last', 'release', 'lock', 'k1', release('write', A)))[0], 1)
  t.equal((await both('released: not found', 'release', 'lock', 'k1', release('write', A)))[0], -2)
  t.equal((await both('again, on the kept fence counter', 'acquire', 'lock', 'k1', acquire('write', B, 30_000)))[0], 1)
  t.equal((await both('renew', 'renew', 'lock', 'k1', ['write', B, 40_000]))[0], 1)
  t.equal((await both('renew with the kept TTL', 'renew', 'lock', 'k1', ['write', B, 0]))[0], 1)
  t.equal((await both('renew, not the owner', 'renew', 'lock', 'k1', ['write', A, 40_000]))[0], -3)
  t.equal((await both('release, not the owner', 'release', 'lock', 'k1', release('write', A)))[0], -3)
  t.ok(((await both('inspect', 'inspect', 'lock', 'k1', ['0']))[0] ?? 0) > 0, 'inspect shows the writer')
  t.equal((await both('release after inspect', 'release', 'lock', 'k1', release('write', B)))[0], 1)
  t.equal((await both('a new lock, inspected', 'acquire', 'lock', 'k8', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('its release', 'release', 'lock', 'k8', release('write', A)))[0], 1)

  // What the fast paths do not know goes to the general path: more arguments, more hash fields.
  t.equal((await both('an argument after the ninth', 'acquire', 'lock', 'k6', [...acquire('write', A, 30_000), '', '', '', 'more']))[0], 1)
  await Promise.all([fastClient, generalClient].map((c) => c.hset(lockKeys(PREFIX, 'lock', 'k6').holds, 'x', 'another field')))
  t.equal((await both('a hash with another field', 'release', 'lock', 'k6', release('write', A)))[0], 1)

  // An owner label (ARGV[13]): its hold is made by the general path; a refusal by the fast path names
  // the owner as the general path does; the labelled hold's release takes the general path.
  const owned = [...acquire('write', A, 30_000), '', '', '', 'billing-worker-3']
  t.equal((await both('a hold with an owner', 'acquire', 'lock', 'k7', owned))[0], 1)
  const named = await both('held by an owner: 409', 'acquire', 'lock', 'k7', acquire('write', B, 30_000))
  t.same(named.slice(4), ['billing-worker-3'], 'the refusal names the owner')
  t.equal((await both('release of a labelled hold', 'release', 'lock', 'k7', release('write', A)))[0], 1)

  // A waiting request on a free lock; a line behind it; a release with a line.
  t.equal((await both('free, waiting request', 'acquire', 'lock', 'k2', acquire('write', A, 30_000, { waiter: 'r1.1' })))[0], 1)
  t.equal((await both('joins the line', 'acquire', 'lock', 'k2', acquire('write', B, 30_000, { waiter: 'r1.2' })))[0], -1)
  t.equal((await both('release with a line', 'release', 'lock', 'k2', release('write', A)))[0], 1)

  // Hand-offs (a hot key's every grant): to a writer at the head of the line, of this replica (the
  // push comes in the reply), or of another one that hears its push; or, when that one is gone (nobody
  // hears it), to the next in line, by the general path.
  const C = 'tokenC-0123456789abcdef'
  t.equal((await both('holder of a hot key', 'acquire', 'lock', 'h1', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('a waiter of this replica', 'acquire', 'lock', 'h1', acquire('write', B, 20_000, { waiter: 'r1.1' })))[0], -1)
  t.equal((await both('another behind it', 'acquire', 'lock', 'h1', acquire('write', C, 30_000, { waiter: 'r1.2' })))[0], -1)
  const own = await both("release: handed to this replica's waiter", 'release', 'lock', 'h1', release('write', A, 'r1'))
  t.match(own, [1, 0, /^r1\.1\|\d+\|\d+$/], 'the push to it is in the reply')
  t.equal((await both('the waiter claims it', 'acquire', 'lock', 'h1', acquire('write', B, 20_000, { waiter: 'r1.1' })))[0], 1)
  t.match(await both('and releases: the last in line', 'release', 'lock', 'h1', release('write', B, 'r1')), [1, 0, /^r1\.2\|/])
  t.same(await both('whose release leaves nothing', 'release', 'lock', 'h1', release('write', C, 'r1')), [1, 0])

  const listeners = await Promise.all([fastServer, generalServer].map((s) => s.client()))
  t.teardown(() => listeners.forEach((l) => l.disconnect()))
  await Promise.all(listeners.map((l) => l.subscribe(`${wakePrefix(PREFIX)}r2`)))
  t.equal((await both('holder', 'acquire', 'lock', 'h2', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('a waiter of a gone replica', 'acquire', 'lock', 'h2', acquire('write', B, 30_000, { waiter: 'r3.1' })))[0], -1)
  t.equal((await both('one of a listening replica', 'acquire', 'lock', 'h2', acquire('write', C, 30_000, { waiter: 'r2.1' })))[0], -1)
  t.same(await both('release: nobody hears the first, the next hears its push', 'release', 'lock', 'h2', release('write', A, 'r1')), [1, 0])
  t.equal((await both('which is its hold', 'release', 'lock', 'h2', release('write', C, 'r1')))[0], 1)

  // Joining a hot key's line (the hash's holder, a head whose lease holds): at its end, with the next
  // place or the one a quorum gave; what stays general: a waiter already in line, a lapsed head or
  // holder, a labelled holder, a full line.
  t.equal((await both('holder', 'acquire', 'lock', 'j1', acquire('write', A, 30_000, { waiter: 'r1.20' })))[0], 1)
  t.equal((await both('first in line', 'acquire', 'lock', 'j1', acquire('write', B, 30_000, { waiter: 'r1.21' })))[0], -1)
  t.equal((await both('re-grant: the holder in the hash', 'acquire', 'lock', 'j1', acquire('write', A, 30_000)))[0], 2)
  t.match(await both('joins behind it', 'acquire', 'lock', 'j1', acquire('write', C, 30_000, { waiter: 'r1.22' })), [-1, Number, 0, Number])
  t.match(await both('asks again, in line', 'acquire', 'lock', 'j1', acquire('write', C, 30_000, { waiter: 'r1.22' })), [
    -1,
    Number,
    0,
    Number,
  ])
  const placed = [...acquire('write', 'tokenD-0123456789abcdef', 30_000, { waiter: 'r1.23' })]
  placed[7] = '1795000000000123'
  t.equal((await both('joins at a place a quorum gave', 'acquire', 'lock', 'j1', placed))[0], -1)
  t.equal((await both('the holder, labelled', 'acquire', 'lock', 'j2', [...acquire('write', A, 30_000), '', '', '', 'worker-2']))[0], 1)
  t.equal((await both('first in line', 'acquire', 'lock', 'j2', acquire('write', B, 30_000, { waiter: 'r1.24' })))[0], -1)
  t.match(await both('joins behind a labelled holder', 'acquire', 'lock', 'j2', acquire('write', C, 30_000, { waiter: 'r1.25' })), [
    -1,
    Number,
    0,
    Number,
    'worker-2',
  ])
  t.equal((await both('a short hold', 'acquire', 'lock', 'j3', acquire('write', A, 200)))[0], 1)
  t.equal((await both('a waiter', 'acquire', 'lock', 'j3', acquire('write', B, 30_000, { waiter: 'r1.26' })))[0], -1)
  t.equal((await both('re-grant: the short hold in the hash', 'acquire', 'lock', 'j3', acquire('write', A, 200)))[0], 2)
  // The hash outlives its holder (as it may by a millisecond of Redis' expiry).
  await Promise.all([fastClient, generalClient].map((c) => c.persist(lockKeys(PREFIX, 'lock', 'j3').holds)))
  t.equal((await both('holder', 'acquire', 'lock', 'j5', acquire('write', A, 30_000, { waiter: 'r1.28' })))[0], 1)
  t.equal((await both('a waiter whose lease will lapse', 'acquire', 'lock', 'j5', acquire('write', B, 30_000, { waiter: 'r1.29' })))[0], -1)
  await Promise.all(
    [fastClient, generalClient].map(async (c) => {
      const entries = lockKeys(PREFIX, 'lock', 'j5').waiterInfo
      const entry = (await c.hget(entries, 'r1.29')) as string
      await c.hset(entries, 'r1.29', entry.replace(/^write\|\d+\|/, `write|${(await serverMs(c)) + 100}|`))
    }),
  )
  await sleep(250)
  t.match(await both('joins behind a lapsed holder', 'acquire', 'lock', 'j3', acquire('write', C, 30_000, { waiter: 'r1.27' })), [-1])
  t.match(await both('joins behind a lapsed head', 'acquire', 'lock', 'j5', acquire('write', C, 30_000, { waiter: 'r1.20' })), [
    -1,
    Number,
    Number,
  ])
  t.equal((await both('holder', 'acquire', 'lock', 'j4', acquire('write', A, 30_000, { waiter: 'r1.30' })))[0], 1)
  for (let i = 1; i <= 100; i++) await both(`waiter ${i}`, 'acquire', 'lock', 'j4', acquire('write', B, 30_000, { waiter: `r1.3${i}` }))
  t.equal((await both('a full line', 'acquire', 'lock', 'j4', acquire('write', C, 30_000, { waiter: 'r1.4' })))[0], -6, 'too many waiters')

  // What the hand-off leaves to the general path: a head not renewed lately (woken, not handed the
  // lock), one with a lock-delay, a reader at the head, a labelled holder, a reentrant hold.
  const keysOf = (key: string) => lockKeys(PREFIX, 'lock', key)
  t.equal((await both('holder', 'acquire', 'lock', 'h3', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('a waiter', 'acquire', 'lock', 'h3', acquire('write', B, 30_000, { waiter: 'r1.3' })))[0], -1)
  await Promise.all(
    [fastClient, generalClient].map(async (c) => {
      const entry = (await c.hget(keysOf('h3').waiterInfo, 'r1.3')) as string
      await c.hset(keysOf('h3').waiterInfo, 'r1.3', entry.replace(/^write\|\d+\|/, `write|${(await serverMs(c)) + 500}|`))
    }),
  )
  t.same(await both('release: a head not renewed lately is woken', 'release', 'lock', 'h3', release('write', A, 'r1')), [1, 0, 'r1.3'])
  const delayed = [...acquire('write', B, 30_000, { waiter: 'r1.4' }), '', '', '', '', '', '1000']
  t.equal((await both('holder', 'acquire', 'lock', 'h4', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('a waiter with a lock-delay', 'acquire', 'lock', 'h4', delayed))[0], -1)
  t.match(await both('release: handed over with its lock-delay', 'release', 'lock', 'h4', release('write', A, 'r1')), [1, 0, /^r1\.4\|/])
  t.equal((await both('holder', 'acquire', 'rw', 'h5', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('a reader waits', 'acquire', 'rw', 'h5', acquire('read', B, 30_000, { waiter: 'r1.5' })))[0], -1)
  t.match(await both('release: handed to the reader', 'release', 'rw', 'h5', release('write', A, 'r1')), [1, 0, /^r1\.5\|/])
  t.equal((await both('a labelled holder', 'acquire', 'lock', 'h6', [...acquire('write', A, 30_000), '', '', '', 'worker-1']))[0], 1)
  t.equal((await both('a waiter', 'acquire', 'lock', 'h6', acquire('write', B, 30_000, { waiter: 'r1.6' })))[0], -1)
  t.match(await both('release of the labelled hold: handed over', 'release', 'lock', 'h6', release('write', A, 'r1')), [1, 0, /^r1\.6\|/])
  t.equal((await both('holder', 'acquire', 'lock', 'h7', acquire('write', A, 30_000)))[0], 1)
  t.equal((await both('twice', 'acquire', 'lock', 'h7', acquire('write', A, 30_000, { reentrant: true })))[0], 2)
  t.equal((await both('a waiter', 'acquire', 'lock', 'h7', acquire('write', B, 30_000, { waiter: 'r1.7' })))[0], -1)
  t.same(await both('release one of two: nothing handed over', 'release', 'lock', 'h7', release('write', A, 'r1')), [2, 1])
  t.match(await both('the other: handed over', 'release', 'lock', 'h7', release('write', A, 'r1')), [1, 0, /^r1\.7\|/])

  // Read-write: a reader, then a writer; the writer's own read hold (downgrade).
  t.equal((await both('reader', 'acquire', 'rw', 'k3', acquire('read', A, 30_000)))[0], 1)
  t.equal((await both('writer behind a reader', 'acquire', 'rw', 'k3', acquire('write', B, 30_000)))[0], -1)
  t.equal((await both('upgrade refused', 'acquire', 'rw', 'k3', acquire('write', A, 30_000)))[0], -4)
  t.equal((await both('reader leaves', 'release', 'rw', 'k3', release('read', A)))[0], 1)
  t.equal((await both('writer', 'acquire', 'rw', 'k3', acquire('write', B, 30_000)))[0], 1)
  t.equal((await both("writer's read hold", 'acquire', 'rw', 'k3', acquire('read', B, 30_000)))[0], 1)
  t.equal((await both('write released, read kept', 'release', 'rw', 'k3', release('write', B)))[0], 1)

  // Lapsed holds: a writer whose TTL ran out is neither refused against nor released.
  t.equal((await both('short lock', 'acquire', 'lock', 'k4', acquire('write', A, 100)))[0], 1)
  t.equal((await both('short lock 2', 'acquire', 'lock', 'k5', acquire('write', A, 100)))[0], 1)
  await sleep(150)
  t.equal((await both('over a lapsed writer', 'acquire', 'lock', 'k4', acquire('write', B, 30_000)))[0], 1)
  const lapsed = (await both('release of a lapsed hold', 'release', 'lock', 'k5', release('write', A)))[0]
  t.ok(lapsed === -2 || lapsed === 1, 'a lapsed hold: not found (or released, had the key outlived it)')
})

t.test('the common cases take the fast path: Redis commands per script call', async (t) => {
  const server = await startRedis({ t })
  const client = server.client()
  t.teardown(() => client.disconnect())
  const call = caller(client, shipped)
  const hint = (Date.now() + 1000) * 1000
  /** Commands the scripts ran during `run` (INFO commandstats, the script calls themselves left out). */
  const commands = async (run: () => Promise<unknown>) => {
    await client.config('RESETSTAT')
    await run()
    const stats = await client.info('commandstats')
    let n = 0
    for (const [, name, calls] of stats.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
      if (!['evalsha', 'eval', 'config|resetstat', 'info'].includes(name ?? '')) n += Number(calls)
    }
    return n
  }
  const acquire = (token: string) => ['write', token, 30_000, 'a1', hint]
  const A = 'tokenA-0123456789abcdef'
  t.equal(await commands(() => call('acquire', 'lock', 'n', acquire(A))), 4, 'a new lock: 4 commands (EXISTS, TIME, SET … GET, SET)')
  const refused = 'held by another: 4 (EXISTS, TYPE, GET, PTTL)'
  t.equal(await commands(() => call('acquire', 'lock', 'n', acquire('tokenB-0123456789abcdef'))), 4, refused)
  t.equal(await commands(() => call('renew', 'lock', 'n', ['write', A, 30_000])), 3, 'renew: 3 (TYPE, GET, SET)')
  t.equal(await commands(() => call('release', 'lock', 'n', ['write', A, hint])), 3, 'release: 3 (TYPE, GET, DEL)')
  // A hold in the hash (a re-acquire, by the general path, moves a plain hold there): released by the hash's fast path.
  await call('acquire', 'lock', 'n', acquire(A))
  await call('acquire', 'lock', 'n', acquire(A))
  t.equal(
    await commands(() => call('release', 'lock', 'n', ['write', A, hint])),
    6,
    'release of a hold in the hash: 6 (TYPE, HMGET, EXISTS, HLEN, TIME, DEL)',
  )
  // A hand-off to this replica's waiter at the head of the line, others behind it (a hot key), with a
  // fence hint above the counter (as the service's clock makes it).
  await call('acquire', 'lock', 'n', acquire(A))
  await call('acquire', 'lock', 'n', acquire(A))
  for (const [i, token] of ['tokenB-0123456789abcdef', 'tokenC-0123456789abcdef'].entries()) {
    await call('acquire', 'lock', 'n', ['write', token, 30_000, `w${i}`, hint, '', `r1.${i}`])
  }
  t.equal(
    await commands(() => call('release', 'lock', 'n', ['write', A, hint + 1_000_000, 'r1'])),
    14,
    'a hand-off: 14 (TYPE, HMGET, EXISTS, HLEN, TIME, ZRANGE, HGET, SET … GET, ZREM × 2, HDEL, ZCARD, HSET, PEXPIRE)',
  )
  t.equal(
    await commands(() => call('acquire', 'lock', 'n', ['write', 'tokenD-0123456789abcdef', 30_000, 'w3', hint, '', 'r1.3'])),
    17,
    "a join behind a hot key's holder: 17 (EXISTS, ZRANGE, TYPE, HLEN, ZSCORE, ZCARD, HMGET, TIME, HGET, HINCRBY, ZADD × 2, HSET, PEXPIRE × 3, ZRANK)",
  )
  await call('release', 'lock', 'n', ['write', 'tokenB-0123456789abcdef', hint + 2_000_000, 'r1'])
  await call('release', 'lock', 'n', ['write', 'tokenC-0123456789abcdef', hint, 'r1'])
  await call('release', 'lock', 'n', ['write', 'tokenD-0123456789abcdef', hint, 'r1'])
  await call('acquire', 'lock', 'n', acquire(A))
  await call('acquire', 'lock', 'n', acquire(A))
  await client.hset(lockKeys(PREFIX, 'lock', 'n').holds, 'x', 'another field')
  const general = await commands(() => call('release', 'lock', 'n', ['write', 'tokenA-0123456789abcdef', hint]))
  t.ok(general > 6, `a hash with a field the fast path does not know: the general path (${general} commands)`)
  const more = await commands(() => call('acquire', 'lock', 'm', [...acquire(A), '', '', '', '', '', '', '', 'more']))
  t.ok(more > 5, `an acquire with an argument after the ninth: the general path (${more} commands)`)
})
