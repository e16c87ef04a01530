/**
 * Reads on a quorum whose nodes disagree: a hold granted while node 2 was cut off lives on nodes 0
 * and 1 only. When node 1 is the slowest to answer, the first two answers (nodes 0 and 2) disagree;
 * a read that settled on them would call a held lock free, and tell its holder's watch it was lost.
 * Every read must hear every node (each within the node timeout) before it answers.
 */
import t from 'tap'
import { proxiedQuorum } from '../helpers/proxied-quorum.js'

t.test('a hold on nodes 0 and 1, node 1 answering last: every read still sees it', async (t) => {
  const { app, proxies, cutOff, heal } = await proxiedQuorum(t, { nodeTimeoutMs: 1500, logLevel: 'warn' })
  const token = 'partial-reads-token-0000000'

  await cutOff(2)
  const lock = await app.inject({
    method: 'POST',
    url: '/locks/pr?ttl=60s',
    headers: { 'lock-token': token },
    payload: { owner: 'worker-7' },
  })
  t.equal(lock.statusCode, 201, 'the lock is granted by nodes 0 and 1')
  const permit = await app.inject({ method: 'POST', url: '/semaphores/pr?limit=2&ttl=60s', headers: { 'lock-token': token } })
  t.equal(permit.statusCode, 201, 'a permit is granted by nodes 0 and 1')
  await heal(2)

  // Node 1 now answers 300 ms after the others: the first two answers are node 0's (held) and node 2's (free).
  proxies[1]!.setLatency({ down: { ms: 300 } })
  const inspected = await app.inject({ method: 'GET', url: '/locks/pr' })
  t.equal(inspected.statusCode, 200, `inspect: held (${inspected.body})`)
  t.match(inspected.json(), { fence: lock.json().fence, owner: 'worker-7' }, 'with its fence and owner')
  const semaphore = await app.inject({ method: 'GET', url: '/semaphores/pr' })
  t.equal(semaphore.statusCode, 200, `semaphore inspect: a permit in use (${semaphore.body})`)
  t.equal(semaphore.json().permitsInUse, 1)
  const watched = await app.inject({ method: 'GET', url: '/locks/pr/watch?wait=200ms', headers: { 'lock-token': token } })
  t.equal(watched.statusCode, 200, watched.body)
  t.match(watched.json(), { held: true }, "the holder's watch: still held, not lost")
  const again = await app.inject({ method: 'POST', url: '/locks/pr', headers: { 'lock-token': 'someone-else-token-00000000' } })
  t.equal(again.statusCode, 409, 'and it is still refused to anyone else')
})
