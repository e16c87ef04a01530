/**
 * Regression tests for the holes fault injection found: a replica that first meets a node after its
 * restart trusted it (hole 1), and hand-offs counted votes from quarantined nodes (hole 2). Both
 * against real redis-servers and real service processes, with a TCP proxy to cut one replica from
 * one node.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { startRedisCluster, type RedisProcess } from '../../harness/redis-server.js'
import { startService, type ServiceProcess } from '../../harness/service-process.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import { request, type HttpResult } from '../../harness/http.js'
import { History } from '../../harness/history.js'
import { until } from '../helpers/until.js'

const MAX_TTL_MS = 10_000
const MAX_LOCK_DELAY_MS = 2_000
/** How long a node restarted empty sits out: every hold it may have voted for, and the lock-delay after it. */
const QUARANTINE_MS = (MAX_TTL_MS + MAX_LOCK_DELAY_MS) * 1.01
const serviceEnv = (urls: readonly string[]) => ({
  REDIS_URLS: urls.join(','),
  MAX_TTL_MS: String(MAX_TTL_MS),
  MAX_LOCK_DELAY_MS: String(MAX_LOCK_DELAY_MS),
  DEFAULT_TTL_MS: String(MAX_TTL_MS),
  NODE_TIMEOUT_MS: '200',
})

interface NodeView {
  vote: string
  up: boolean
  quarantineMs: number
}
const nodesOf = async (replica: ServiceProcess): Promise<NodeView[]> =>
  (await request(replica.url, 'GET', '/readyz')).body.nodes as NodeView[]
/** Connected, and the restart check done (a node being identified does not count either way). */
const settled = (n: NodeView | undefined) => n?.up === true && n.vote !== 'identifying'

/** A grant, recorded in the history with the timings the checker needs. */
async function acquire(history: History, via: ServiceProcess, key: string, client: string, query = ''): Promise<HttpResult> {
  const sent = performance.now()
  const res = await request(via.url, 'POST', `/locks/${key}${query}`)
  if (res.status === 201) {
    history.recordGrant({
      key,
      mode: 'exclusive',
      client,
      fence: res.body.fence as number,
      requestStartedAt: sent,
      responseAt: performance.now(),
      validityMs: res.body.validityMs as number,
      // Never released: the hold lasts its validity.
      releaseSentAt: Infinity,
    })
  }
  return res
}

/** What a refused acquire may answer here: held (409), or no majority to decide (503) — never a grant, never a 500. */
const REFUSED = new Set(['409 lock_held', '503 backend_unavailable'])
const answer = (res: HttpResult) => `${res.status} ${String(res.body.error)}`

/**
 * Once the first hold has lapsed and the restarted nodes' quarantine is over, the key is granted
 * again, with a fence above the first hold's although the restarts lost the nodes' counters: the
 * history then checks two holds and their order, not one.
 */
async function grantedAgain(history: History, via: ServiceProcess, key: string): Promise<void> {
  await until(
    async () => (await acquire(history, via, key, 'after the quarantine')).status === 201,
    'a grant once the first hold lapsed and the quarantine ended',
    QUARANTINE_MS * 2,
    200,
  )
}

/**
 * Steps 1–3 of both reproductions: nodes A B C; replica R1 reaches A through a proxy, R2 directly.
 * R1, cut from A, is granted `key` by B and C; the cut heals; C is killed and restarted empty. The
 * lock is now held on B alone (and on R1's client), with most of its validity left.
 */
async function heldOnOneNodeAfterRestart(t: Test, key: string) {
  const nodes = await startRedisCluster(3, { t })
  const [a, b, c] = nodes as [RedisProcess, RedisProcess, RedisProcess]
  const proxyA = await startProxy({ port: a.port }, { t })
  const [r1, r2] = await Promise.all([
    startService(serviceEnv([proxyA.url, b.url, c.url]), { t }),
    startService(serviceEnv([a.url, b.url, c.url]), { t }),
  ])
  const history = new History()
  proxyA.cut('reset')
  await until(async () => (await nodesOf(r1))[0]?.up === false, 'R1 cut from A')
  const firstAt = performance.now()
  const first = await acquire(history, r1, key, 'first', `?ttl=${MAX_TTL_MS}`)
  t.equal(first.status, 201, 'R1 granted by B and C')
  const validUntil = firstAt + (first.body.validityMs as number)
  proxyA.heal()
  await until(async () => (await nodesOf(r1))[0]?.vote === 'counts', 'R1 reaches A again')
  t.equal((await acquire(history, r2, key, 'r2-before')).status, 409, 'R2 sees it held (B and C)')
  await c.kill()
  await c.restart()
  await until(async () => settled((await nodesOf(r2))[2]), 'R2 reconnected to C')
  t.equal((await acquire(history, r2, key, 'r2-after-restart')).status, 409, 'A and the empty C do not make a majority')
  t.equal((await nodesOf(r2))[2]?.vote, 'quarantined', "R2's /readyz shows C quarantined")
  return { nodes, r1, r2, validUntil, history }
}

t.test('hole 1: a replica that restarts learns of a node restart from the nodes, not from its memory', async (t) => {
  const key = 'hole-1'
  const { nodes, r2, validUntil, history } = await heldOnOneNodeAfterRestart(t, key)
  // R2 restarts (deploy, crash): it has never seen C's old run.
  await r2.stop('SIGKILL')
  const r2b = await startService(serviceEnv(nodes.map((n) => n.url)), { t })
  await until(async () => settled((await nodesOf(r2b))[2]), 'the new R2 identified C')
  const seen = (await nodesOf(r2b))[2]
  t.equal(seen?.vote, 'quarantined', 'the new R2 sees C quarantined at once')
  t.ok((seen?.quarantineMs ?? 0) > 0 && (seen?.quarantineMs ?? 0) <= QUARANTINE_MS + 1000, `for ${seen?.quarantineMs} ms`)
  const res = await acquire(history, r2b, key, 'r2-restarted')
  t.equal(res.status, 409, `refused while the first hold is valid (${res.body.error})`)
  t.ok(performance.now() < validUntil, `asked with ${Math.round(validUntil - performance.now())} ms of the first hold's validity left`)
  await grantedAgain(history, r2b, key)
  t.equal(history.size, 2, 'the first hold and the one after it')
  history.assertSafe(t, 'hole 1')
})

t.test('hole 2: hand-offs from a quarantined node do not count toward a waiter’s majority', async (t) => {
  const key = 'hole-2'
  const { r1, r2, validUntil, history } = await heldOnOneNodeAfterRestart(t, key)
  // Try-once contenders through R1: each attempt lands free on A and C, is refused and rolled back,
  // and the rollback hands the lock to the head waiter on A and C.
  let stop = false
  const statuses: number[] = []
  const contenders = Array.from({ length: 4 }, async (_, i) => {
    for (let n = 0; !stop && n < 2000; n++) statuses.push((await acquire(history, r1, key, `contender-${i}`)).status)
  })
  for (let run = 0; run < 3; run++) {
    const waited = await acquire(history, r2, key, `waiter-${run}`, '?wait=1000')
    t.equal(waited.status, 409, `waiter ${run}: not granted while the first hold is valid (${waited.body.error})`)
  }
  stop = true
  await Promise.all(contenders)
  t.ok(performance.now() < validUntil, 'all of it within the first hold’s validity')
  t.same(
    statuses.filter((s) => s !== 409),
    [],
    `${statuses.length} try-once attempts: every one refused`,
  )
  await grantedAgain(history, r2, key)
  t.equal(history.size, 2, 'the first hold and the one after it')
  history.assertSafe(t, 'hole 2')
})

t.test('hole 2, no network cut: two nodes restarted empty 0.4 s apart are both quarantined', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const [, b, c] = nodes as [RedisProcess, RedisProcess, RedisProcess]
  const [r1, r2] = await Promise.all([
    startService(serviceEnv(nodes.map((n) => n.url)), { t }),
    startService(serviceEnv(nodes.map((n) => n.url)), { t }),
  ])
  const history = new History()
  const key = 'hole-2b'
  const firstAt = performance.now()
  const first = await acquire(history, r1, key, 'first', `?ttl=${MAX_TTL_MS}`)
  t.equal(first.status, 201)
  const validUntil = firstAt + (first.body.validityMs as number)
  await b.kill()
  await b.restart()
  await sleep(400)
  await c.kill()
  await c.restart()
  await until(async () => (await nodesOf(r2)).every(settled), 'R2 reconnected')
  const votes = (await nodesOf(r2)).map((n) => n.vote)
  t.same(votes, ['counts', 'quarantined', 'quarantined'], 'both restarted nodes are quarantined')
  let stop = false
  const answers: string[] = []
  const contenders = Array.from({ length: 4 }, async (_, i) => {
    for (let n = 0; !stop && n < 2000; n++) answers.push(answer(await acquire(history, r1, key, `contender-${i}`)))
  })
  const waited = await acquire(history, r2, key, 'waiter', '?wait=1000')
  stop = true
  await Promise.all(contenders)
  t.ok(performance.now() < validUntil, 'all of it within the first hold’s validity')
  t.ok(REFUSED.has(answer(waited)), `the waiter is refused (${answer(waited)})`)
  t.same(
    answers.filter((a) => !REFUSED.has(a)),
    [],
    `${answers.length} try-once attempts: every one refused (${[...new Set(answers)].join(', ')})`,
  )
  await grantedAgain(history, r2, key)
  t.equal(history.size, 2, 'the first hold and the one after it')
  history.assertSafe(t, 'two nodes restarted')
})
