/**
 * Leader election through the library against the real service: campaign, whileLeader (the term is
 * the fence; the signal fires when leadership is lost), and observing every change.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Client, InvalidArgumentError, LockHeldError, type Observed } from '../src/index.js'
import { abortedWithin, runId, startEnvironment } from './environment.js'

const { env, stop } = await startEnvironment()
t.teardown(stop)
const client = new Client({ url: env.service, apiKey: env.adminKey })
const name = (n: string): string => `${runId}:election:${n}`

t.test('campaign: a leader with a term; another candidate is refused with who leads; resign hands over', async (t) => {
  const e = name('campaign')
  const first = await client.campaign(e, { candidate: 'node-1', value: 'http://10.0.0.1', ttlMs: 5000 })
  t.ok(Number.isSafeInteger(first.term) && first.term > 0, 'a term')
  t.match(await client.elections.inspect(e), { leader: { candidate: 'node-1', value: 'http://10.0.0.1', term: first.term } })
  const refused = await client.elections.campaign(e, { candidate: 'node-2' }).catch((err: unknown) => err)
  t.type(refused, LockHeldError)
  t.same((refused as LockHeldError).owners, ['node-1'], 'names the leader')
  const waiting = client.campaign(e, { candidate: 'node-2', ttlMs: 5000, waitMs: 5000 })
  await sleep(200)
  await first.resign()
  const second = await waiting
  t.ok(second.term > first.term, 'the next term is greater')
  t.equal(second.candidate, 'node-2')
  await second.resign()
})

t.test('whileLeader keeps leadership past 3× its TTL, then resigns', async (t) => {
  const e = name('keep')
  let term = 0
  await client.whileLeader(e, { candidate: 'node-1', ttlMs: 1000 }, async (leadership) => {
    term = leadership.term
    await sleep(3500)
    t.match(await client.elections.inspect(e), { leader: { term } }, 'still leader after 3.5 s')
    t.notOk(leadership.signal.aborted)
  })
  t.match(await client.elections.inspect(e).catch((err: unknown) => err), { leader: null }, 'no leader after it returns')
})

t.test('whileLeader: a force-resign aborts the signal at once (force_released); the block returns normally', async (t) => {
  const e = name('force')
  const errors: Error[] = []
  const result = await client.whileLeader(
    e,
    { candidate: 'node-1', ttlMs: 10_000, onReleaseError: (err) => errors.push(err) },
    async (leadership) => {
      await sleep(200)
      await client.elections.forceResign(e)
      const answered = performance.now()
      const at = await abortedWithin(leadership.signal, 2000)
      t.ok(
        at !== undefined && at - answered <= 200,
        `signalled ${at === undefined ? '-' : (at - answered).toFixed(1)} ms after the force-resign`,
      )
      t.equal(leadership.lostReason, 'force_released')
      return 'done'
    },
  )
  t.equal(result, 'done')
  t.same(errors, [], 'no resign error on exit')
})

t.test('changes(): the current state, then each election, proclaim and resignation', async (t) => {
  const e = name('observe')
  const stopObserving = new AbortController()
  const seen: Observed[] = []
  const observing = (async () => {
    for await (const state of client.elections.changes(e, { signal: stopObserving.signal })) seen.push(state)
  })()
  await sleep(200)
  const leadership = await client.campaign(e, { candidate: 'node-1', value: 'a', ttlMs: 5000 })
  await sleep(200)
  await leadership.proclaim('b')
  await sleep(200)
  await leadership.resign()
  await sleep(300)
  stopObserving.abort()
  await observing
  const summary = seen.map((s) => (s.leader ? `${s.leader.candidate}@${s.revision}=${s.leader.value}` : 'none'))
  t.same(summary, ['none', 'node-1@1=a', 'node-1@2=b', 'none'], summary.join(' → '))
  t.equal(seen[1]?.term, leadership.term, 'the term elected')
})

t.test('events(): the observe stream starts with the current state', async (t) => {
  const e = name('events')
  const leadership = await client.campaign(e, { candidate: 'node-1', ttlMs: 5000 })
  const events = client.elections.events(e, { waitMs: 2000 })[Symbol.asyncIterator]()
  t.match((await events.next()).value, { event: 'elected', data: { term: leadership.term, candidate: 'node-1' } })
  await leadership.resign()
  t.match((await events.next()).value, { event: 'vacant', data: { term: leadership.term, reason: 'resigned' } })
  await events.return?.(undefined)
})

t.test('checkFence: each kind checks its own resource; an election checks its term', async (t) => {
  const k = name('fenced')
  const read = await client.rwlocks.read.acquire(k, { ttlMs: 10_000 })
  const permit = await client.semaphores.acquire(k, { limit: 2, permits: 1, ttlMs: 10_000 })
  t.equal((await client.rwlocks.checkFence(k, read.fence)).current, true)
  t.equal((await client.checkFence('write', k, read.fence)).current, true, 'write checks the rwlock too')
  t.equal((await client.semaphores.checkFence(k, permit.fence)).current, true)
  t.equal((await client.checkFence('exclusive', k, read.fence)).held, false, 'the lock of the same key is free')
  const leadership = await client.campaign(k, { candidate: 'node-1', ttlMs: 10_000 })
  t.equal((await client.elections.checkFence(k, leadership.term)).current, true)
  t.equal((await client.checkFence('leader', k, leadership.term)).current, true)
  await leadership.resign()
  t.same(await client.elections.checkFence(k, leadership.term), { current: false, fence: null, held: false })
  const badTerm = await client.elections.checkFence(k, 0).catch((err: unknown) => err)
  t.type(badTerm, InvalidArgumentError)
  t.equal((badTerm as InvalidArgumentError).argument, 'term')
})
