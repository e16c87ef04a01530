/**
 * A semaphore on a quorum, with one node cut off at a time (within Redlock's assumptions): every
 * grant is on a majority, but different nodes can miss different holds. Counting permits per node
 * would let three holds of a limit-2 semaphore be valid at once (A on nodes 0 and 1, B on 1 and 2,
 * C on 0 and 2: every node within the limit); the service must never answer so.
 */
import t from 'tap'
import { proxiedQuorum } from '../helpers/proxied-quorum.js'

t.test('one node cut off at a time: never more permits granted than the limit', async (t) => {
  const { app, cutOff, heal } = await proxiedQuorum(t, { nodeTimeoutMs: 200, logLevel: 'warn' })
  const acquire = async (name: string, node: number) => {
    await cutOff(node)
    const res = await app.inject({
      method: 'POST',
      url: '/semaphores/split?limit=2&ttl=60s',
      headers: { 'lock-token': `${name}-quorum-token-00000` },
    })
    await heal(node)
    return res.statusCode
  }
  const granted = [await acquire('a', 2), await acquire('b', 0), await acquire('c', 1)]
  t.ok(
    granted.filter((s) => s === 201).length <= 2,
    `at most 2 of the 3 holds granted while all would be valid (answers: ${granted.join(', ')})`,
  )
  t.equal(granted[0], 201, 'the first, with a node cut off, is granted by the other two')
  const inspected = await app.inject({ method: 'GET', url: '/semaphores/split' })
  t.equal(inspected.statusCode, 200, `a's permit is seen (${inspected.body})`)
  t.ok(inspected.json().permitsInUse <= 2, 'a majority sees at most 2 permits in use')

  // Every node back: nodes 0 and 1 (which hold a's slot) agree on the next free slot, so the second
  // permit is granted; node 2, which missed a, names another slot and is outvoted. Then it is full.
  const post = (name: string) =>
    app.inject({ method: 'POST', url: '/semaphores/split?limit=2&ttl=60s', headers: { 'lock-token': `${name}-quorum-token-00000` } })
  const held = granted.filter((s) => s === 201).length
  const more = [(await post('d')).statusCode, (await post('e')).statusCode]
  t.same(
    more.slice(0, 2 - held),
    Array(2 - held).fill(201),
    `with every node up, the free permits are granted (answers: ${more.join(', ')})`,
  )
  t.equal(more.filter((s) => s === 201).length, 2 - held, 'and no more')
})
