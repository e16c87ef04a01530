import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { lockKeys } from '../../src/locks/keys.js'
import { startListening } from '../../harness/app.js'
import { contendThroughKill } from '../helpers/failover.js'
import { request, type HttpResult } from '../../harness/http.js'
import { startRedisClusterMode, type RedisClusterProcesses } from '../../harness/redis-cluster.js'
import type { RedisProcess } from '../../harness/redis-server.js'

const tok = (name: string) => `${name}-failover-token-00000`
const KEYS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']

/** The master of `key`'s slot (/locks namespace) and its replica, now. */
async function shardOf(redis: RedisClusterProcesses, key: string): Promise<{ master: RedisProcess; replica: RedisProcess }> {
  const client = redis.client()
  try {
    const slot = (await client.cluster('KEYSLOT', lockKeys('lock-service:', 'lock', key).holds)) as number
    const master = await redis.masterOf(slot)
    const c = master.client()
    const info = await c.info('replication')
    c.disconnect()
    const port = Number(/^slave0:.*port=(\d+)/m.exec(info)?.[1])
    const replica = redis.nodes.find((n) => n.port === port)
    if (!replica) throw new Error(`no replica of ${master.address}`)
    return { master, replica }
  } finally {
    client.disconnect()
  }
}

/**
 * Sends `send()` again while it answers 503, for at most 10 s: on a loaded machine a node timeout (or
 * WAIT not confirmed in time) is a correct 503 that leaves nothing held, and the next try may succeed.
 */
async function untilAvailable(send: () => Promise<HttpResult>): Promise<HttpResult> {
  const started = performance.now()
  let reply = await send()
  while (reply.status === 503 && performance.now() - started < 10_000) {
    await sleep(50)
    reply = await send()
  }
  return reply
}

/**
 * The fault: a master's replica falls behind (paused), a lock is granted on the master, the master
 * dies, the replica that never saw the grant is promoted. Without REDIS_WAIT_REPLICAS the grant is
 * lost (a second client is granted while the first still holds); with it, the grant was never
 * answered. Either way the fence counter was lost with it, and the next fence is still higher (the
 * Redis TIME floor, include/fence.lua).
 */
async function lostReplication(t: Test, waitReplicas: number) {
  const redis = await startRedisClusterMode({ t })
  const { address } = await startListening(t, redis.urls, { redisMode: 'cluster', logLevel: 'silent', nodeTimeoutMs: 500, waitReplicas })
  const key = 'lost'
  const kept = 'kept'
  const { master, replica } = await shardOf(redis, key)
  // A lock granted before the fault on the same master: replicated (and confirmed with WAIT).
  const before = await shardOf(redis, kept)
  const keptGrant =
    before.master === master
      ? await untilAvailable(() => request(address, 'POST', `/locks/${kept}?ttl=60s`, { token: tok('kept') }))
      : undefined
  await sleep(200) // replication of the kept grant (asynchronous without WAIT)
  // The replica stops (SIGSTOP) and the master drops its link, so nothing written from now on is in
  // any socket buffer on the way to it.
  replica.pause()
  const admin = master.client()
  await admin.client('KILL', 'TYPE', 'replica')
  admin.disconnect()
  const first = await request(address, 'POST', `/locks/${key}?ttl=60s`, { token: tok('first') })
  await master.kill()
  replica.resume()
  await redis.waitHealthy({ replicas: 0 })
  // The promoted replica has no replica of its own: with REDIS_WAIT_REPLICAS=1 nothing can be
  // confirmed on it; a service without WAIT shows what it holds.
  const { address: plain } = await startListening(t, redis.urls, { redisMode: 'cluster', logLevel: 'silent', nodeTimeoutMs: 500 })
  const second = await untilAvailable(() => request(plain, 'POST', `/locks/${key}?ttl=60s`, { token: tok('second') }))
  // The same hash tag, so the same slot: now on the promoted master.
  const confirmed = await request(address, 'POST', `/rwlocks/${key}/write?ttl=60s`, { token: tok('third') })
  const client = redis.client()
  const counter = await client.get(lockKeys('lock-service:', 'lock', key).fence)
  client.disconnect()
  return { first, second, counter, keptGrant, kept, plain, confirmed }
}

t.test('a master fails over to a replica that missed the latest grant', async (t) => {
  t.test('REDIS_WAIT_REPLICAS=0: the grant is lost (two holders), the fence still goes up', async (t) => {
    const { first, second, counter } = await lostReplication(t, 0)
    t.equal(first.status, 201, 'granted on the master alone')
    t.equal(second.status, 201, 'after the failover a second client is granted: the first grant was lost')
    t.ok((second.body.fence as number) > (first.body.fence as number), `fence ${second.body.fence} > ${first.body.fence}`)
    t.ok(counter === null || Number(counter) <= (second.body.fence as number), 'the promoted replica had no record of the first fence')
  })
  t.test('REDIS_WAIT_REPLICAS=1: the unconfirmed grant is refused (503), a confirmed one survives', async (t) => {
    const { first, second, counter, keptGrant, kept, plain, confirmed } = await lostReplication(t, 1)
    t.equal(first.status, 503, 'WAIT could not confirm it: rolled back and refused')
    t.equal(first.body.error, 'backend_unavailable')
    t.equal(second.status, 201, 'after the failover the lock is free: nobody was told they held it')
    t.ok(counter === null || Number(counter) <= (second.body.fence as number))
    if (keptGrant) {
      t.equal(keptGrant.status, 201, 'the kept grant was confirmed by its replica')
      const state = await request(plain, 'GET', `/locks/${kept}`)
      t.equal(state.status, 200, 'a grant WAIT confirmed before the fault is still held after the failover')
      t.equal(state.body.fence, keptGrant.body.fence)
      t.equal((await request(plain, 'POST', `/locks/${kept}`, { token: tok('thief') })).status, 409)
    }
    t.equal(confirmed.status, 503, 'the promoted master has no replica yet: nothing on it can be confirmed, so nothing is granted')
  })
})

/**
 * Clients contend on keys on every master while the master of one key is killed: the service
 * answers 503 (never another 5xx) while the slot has no master, recovers once the replica is
 * promoted, and the history shows no overlap with REDIS_WAIT_REPLICAS=1.
 */
async function killUnderContention(t: Test, waitReplicas: number) {
  // With WAIT 1 every master needs a second replica, or the promoted one could confirm nothing.
  const redis = await startRedisClusterMode({ t, nodeTimeoutMs: 1000, replicasPerMaster: 1 + waitReplicas })
  const { address } = await startListening(t, redis.urls, { redisMode: 'cluster', logLevel: 'silent', nodeTimeoutMs: 500, waitReplicas })
  const victim = (await shardOf(redis, 'alpha')).master
  // The probe uses /rwlocks/alpha: the same hash tag as /locks/alpha, so the killed master's slot.
  return contendThroughKill({ address, keys: KEYS, probeKey: 'alpha', kill: () => victim.kill() })
}

t.test('a master killed under contention, REDIS_WAIT_REPLICAS=1: 503 while it lasts, no overlap, recovery', async (t) => {
  const { stats, history, recoveryMs } = await killUnderContention(t, 1)
  const recovered = !Number.isNaN(recoveryMs)
  t.same(stats.unexpected, [], 'only 201, 409 and 503 (and 200: a hold an earlier 503 made)')
  t.ok(stats.unavailable > 0, `${stats.unavailable} answers were 503 while the slot had no master`)
  t.ok(recovered, `grants again ${recoveryMs.toFixed(0)} ms after the kill (cluster-node-timeout 1000 ms)`)
  t.ok(stats.grants >= 50, `${stats.grants} grants`)
  history.assertSafe(t)
  t.comment(
    `recovery after a master kill (WAIT 1): ${recoveryMs.toFixed(0)} ms; ${stats.unavailable} × 503; ${history.check().length} violations`,
  )
})

t.test('the same kill without REDIS_WAIT_REPLICAS: recovers; overlaps counted (asynchronous replication may lose a grant)', async (t) => {
  const { stats, history, recoveryMs } = await killUnderContention(t, 0)
  const recovered = !Number.isNaN(recoveryMs)
  t.same(stats.unexpected, [], 'only 201, 409 and 503 (and 200: a hold an earlier 503 made)')
  t.ok(recovered, `grants again ${recoveryMs.toFixed(0)} ms after the kill`)
  t.ok(stats.grants >= 50, `${stats.grants} grants`)
  const violations = history.check()
  t.same(
    violations.filter((v) => v.kind !== 'overlap'),
    [],
    'fences strictly increase across the failover (the TIME floor), whatever was lost',
  )
  t.comment(
    `recovery after a master kill (WAIT 0): ${recoveryMs.toFixed(0)} ms; ${stats.unavailable} × 503; ${violations.length} overlaps in ${history.size} holds`,
  )
})
