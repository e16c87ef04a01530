// The benchmark baselines: trivial Fastify servers answering the lock service's JSON shapes with as
// little work as possible behind them. Each runs as its own process, started and loaded exactly like
// the service (plain `node`, PORT/HOST/LOG_LEVEL from the environment, same load generator, same
// requests). Plain JavaScript so it runs without a TypeScript loader, like dist/server.js.
//
// Without BASELINE_REDIS_URL ("baseline"): no validation, no Redis, no metrics — the ceiling this
// machine gives an HTTP service in this run.
//
// With BASELINE_REDIS_URL ("redis floor"): the same routes, each doing the one Redis round trip a
// lock operation cannot avoid (a tiny Lua script via EVALSHA on one ioredis connection: SET NX PX to
// acquire, compare-and-delete to release; 409 when held, 404 when not). Nothing else: the floor for
// any lock service built from Fastify + ioredis + one Redis on this machine.
//
// A POST with `?wait=` on the redis floor waits in line: the same one round trip joins a list in
// Redis when the key is held, and a release hands the key to the list's head in its own round trip
// (compare, pop, set) and answers that parked request: the shortest chain a hand-off between
// clients can take through Redis (release sent → service → Redis → service → next holder). The
// line has no timeout or cancellation (a floor, not a lock service); the baseline without Redis
// grants every POST at once, wait or not.
//
//   POST   /locks/:key  → 201 { key, mode, token, fence, ttlMs, validityMs, expiresAt, holdCount } | 409
//   DELETE /locks/:key  → 200 { key, released: true, holdCount: 0 } | 404
//   POST   /rwlocks/:key/read|write  → 201, the same grant shape with mode 'read' | 'write' | 409
//   DELETE /rwlocks/:key/read|write  → 200 { key, released: true, holdCount: 0 } | 404
//   GET    /readyz      → 200 { ready: true }
//   POST   /parked/:key → stays open until DELETE /parked, then 201 with the grant shape: the floor
//                         for a parked waiting request (what Fastify itself keeps per open request)
//   GET    /parked      → 200 { parked }   DELETE /parked → 200 { released } (answers them all)
//
// The /rwlocks routes grant every hold (no read/write exclusion: they measure the HTTP cost of the
// read-write routes, not their semantics); with BASELINE_REDIS_URL each does its one round trip on a
// key of its own per hold (mode and token), so holds never conflict there either.
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'

const TTL_MS = 30_000
const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } })
let fence = Date.now() * 1000

const ACQUIRE = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
// KEYS: the lock, its line. ARGV: token, ttl ms. 1 = granted, 0 = in line.
const JOIN = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end redis.call('RPUSH', KEYS[2], ARGV[1]) return 0"
// KEYS: the lock, its line. ARGV: token, ttl ms. The token the lock went to ('' = freed), or false when not held by ARGV[1].
const HAND_OFF =
  "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end local next = redis.call('LPOP', KEYS[2]) " +
  "if next then redis.call('SET', KEYS[1], next, 'PX', ARGV[2]) return next end redis.call('DEL', KEYS[1]) return ''"

/**
 * @typedef {{
 *   acquire(key: string, token: string, ttl: number): Promise<number>,
 *   release(key: string, token: string): Promise<number>,
 *   join(key: string, line: string, token: string, ttl: number): Promise<number>,
 *   handOff(key: string, line: string, token: string, ttl: number): Promise<string | null>,
 *   quit(): Promise<unknown>,
 * }} FloorRedis
 */
/** @type {FloorRedis | undefined} */
let redis
if (process.env.BASELINE_REDIS_URL) {
  const { Redis } = await import('ioredis')
  const client = new Redis(process.env.BASELINE_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
  client.defineCommand('acquire', { numberOfKeys: 1, lua: ACQUIRE })
  client.defineCommand('release', { numberOfKeys: 1, lua: RELEASE })
  client.defineCommand('join', { numberOfKeys: 2, lua: JOIN })
  client.defineCommand('handOff', { numberOfKeys: 2, lua: HAND_OFF })
  await new Promise((resolve) => client.once('ready', resolve))
  redis = /** @type {any} */ (client)
}

/** @param {string} key @param {string} mode @param {string} token */
function grantBody(key, mode, token) {
  return {
    key,
    mode,
    token,
    fence: ++fence,
    ttlMs: TTL_MS,
    validityMs: TTL_MS - Math.ceil(TTL_MS * 0.01 + 2),
    expiresAt: new Date(Date.now() + TTL_MS).toISOString(),
    holdCount: 1,
  }
}

/** The redis floor's parked requests by token: answered when a release hands their key over. */
/** @type {Map<string, (value: unknown) => void>} */
const inLine = new Map()
/**
 * Keys a waiting POST was sent for (from the moment it is sent: a release sent later must look at the
 * line). Releases of other keys keep the plain compare-and-delete, so the floor's uncontended and
 * contended figures are unchanged.
 * @type {Set<string>}
 */
const lined = new Set()
/** @param {string} key */
const lineOf = (key) => `baseline:{${key}}:line`

app.post('/locks/:key', async (request, reply) => {
  const { key } = /** @type {{ key: string }} */ (request.params)
  const header = request.headers['lock-token']
  const token = typeof header === 'string' ? header : randomBytes(16).toString('base64url')
  if (redis && /** @type {{ wait?: string }} */ (request.query).wait !== undefined) {
    lined.add(key)
    // Parked before any later release's answer is read (one connection: answers come in order).
    if ((await redis.join(`baseline:{${key}}`, lineOf(key), token, TTL_MS)) !== 1)
      await new Promise((resolve) => inLine.set(token, resolve))
  } else if (redis && (await redis.acquire(`baseline:{${key}}`, token, TTL_MS)) !== 1) {
    return reply.code(409).send({ error: 'lock_held', message: `lock "${key}" is held by another owner`, key, retryAfterMs: 1000 })
  }
  return reply.code(201).send(grantBody(key, 'exclusive', token))
})

app.delete('/locks/:key', async (request, reply) => {
  const { key } = /** @type {{ key: string }} */ (request.params)
  const token = String(request.headers['lock-token'])
  if (redis && !lined.has(key)) {
    if ((await redis.release(`baseline:{${key}}`, token)) !== 1) {
      return reply.code(404).send({ error: 'lock_not_found', message: `lock "${key}" is not held`, key })
    }
  } else if (redis) {
    const next = await redis.handOff(`baseline:{${key}}`, lineOf(key), token, TTL_MS)
    if (next === null) return reply.code(404).send({ error: 'lock_not_found', message: `lock "${key}" is not held`, key })
    inLine.get(next)?.(undefined)
    inLine.delete(next)
  }
  return { key, released: true, holdCount: 0 }
})

for (const mode of ['read', 'write']) {
  app.post(`/rwlocks/:key/${mode}`, async (request, reply) => {
    const { key } = /** @type {{ key: string }} */ (request.params)
    const header = request.headers['lock-token']
    const token = typeof header === 'string' ? header : randomBytes(16).toString('base64url')
    if (redis && (await redis.acquire(`baseline:{rw:${key}}:${mode}:${token}`, token, TTL_MS)) !== 1) {
      return reply
        .code(409)
        .send({ error: 'lock_held', message: `read-write lock "${key}" is held by another owner`, key, retryAfterMs: 1000 })
    }
    return reply.code(201).send(grantBody(key, mode, token))
  })

  app.delete(`/rwlocks/:key/${mode}`, async (request, reply) => {
    const { key } = /** @type {{ key: string }} */ (request.params)
    const token = String(request.headers['lock-token'])
    if (redis && (await redis.release(`baseline:{rw:${key}}:${mode}:${token}`, token)) !== 1) {
      return reply.code(404).send({ error: 'lock_not_found', message: `read-write lock "${key}" is not held by this token`, key })
    }
    return { key, released: true, holdCount: 0 }
  })
}

/** @type {Set<() => void>} */
const parked = new Set()
app.post('/parked/:key', async (request, reply) => {
  const { key } = /** @type {{ key: string }} */ (request.params)
  await new Promise((resolve) => parked.add(() => resolve(undefined)))
  return reply.code(201).send(grantBody(key, 'exclusive', String(request.headers['lock-token'])))
})
app.get('/parked', async () => ({ parked: parked.size }))
app.delete('/parked', async () => {
  const released = parked.size
  for (const answer of parked) answer()
  parked.clear()
  return { released }
})

app.get('/readyz', async () => ({ ready: true }))

const stop = async () => {
  await app.close()
  await redis?.quit()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' })
