import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { lockKeys } from '../../src/locks/keys.js'
import { startListening } from '../../harness/app.js'
import { contend } from '../helpers/contenders.js'
import { History } from '../../harness/history.js'
import { startRedisClusterMode } from '../../harness/redis-cluster.js'

/**
 * Slots move (MIGRATE, as a resharding does) while clients contend on the locks that live in them:
 * the service follows ASK / MOVED / TRYAGAIN inside its node timeout, answers nothing but 201, 409
 * and 503 (a 200: a hold an earlier 503 made), and the history shows no overlap.
 */
t.test('resharding the slots of hot locks while clients contend', async (t) => {
  const redis = await startRedisClusterMode({ t, replicasPerMaster: 0 })
  const { address } = await startListening(t, redis.urls, { redisMode: 'cluster', logLevel: 'silent', nodeTimeoutMs: 500 })
  const keys = ['alpha', 'bravo', 'charlie']
  const client = redis.client()
  // Each lock's keys share one slot, whatever the namespace: move the /locks one (and its /rwlocks twin).
  const slotOf = async (key: string) => (await client.cluster('KEYSLOT', key)) as number
  const slots = await Promise.all(keys.map(async (k) => slotOf(lockKeys('lock-service:', 'lock', k).holds)))
  // Every key of a lock, in either namespace, in the slot that moves.
  const slotsOfAllKeys = await Promise.all(
    keys.map(async (k) => {
      const all = [...lockKeys('lock-service:', 'lock', k).all, ...lockKeys('lock-service:', 'rw', k).all]
      return [...new Set(await Promise.all(all.map(slotOf)))]
    }),
  )
  client.disconnect()
  const history = new History()
  let moves = 0
  const resharding = (async () => {
    await sleep(1000)
    for (let round = 0; round < 2; round++) {
      for (const slot of slots) {
        const owner = await redis.masterOf(slot)
        const masters = [...(await redis.roles())].filter(([, role]) => role === 'master').map(([port]) => port)
        const to = redis.nodes.find((n) => n.port !== owner.port && masters.includes(n.port))!
        await redis.migrateSlot(slot, to)
        moves++
        await sleep(200)
      }
    }
  })()
  const stats = await contend({
    baseUrls: [address],
    history,
    keys,
    clients: 12,
    durationMs: 5000,
    ttlMs: 2000,
    waitMs: 500,
    pickMode: (c) => (c % 4 === 0 ? 'write' : c % 4 === 1 ? 'read' : 'exclusive'),
    faults: true,
  })
  await resharding
  t.equal(moves, 6, 'every hot slot moved twice while the clients ran')
  t.same(
    slotsOfAllKeys,
    slots.map((slot) => [slot]),
    'each lock’s keys, /locks and /rwlocks alike, all lived in the slot that moved',
  )
  t.same(stats.unexpected, [], 'only 201, 409 and 503 (and 200)')
  t.ok(stats.grants >= 100, `${stats.grants} grants, ${stats.unavailable} × 503 during ${moves} slot moves`)
  history.assertSafe(t)
  t.comment(`resharding: ${stats.grants} grants, ${stats.conflicts} × 409, ${stats.unavailable} × 503 during ${moves} slot moves`)
})
