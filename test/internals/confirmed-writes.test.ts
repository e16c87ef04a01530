/**
 * REDIS_WAIT_REPLICAS' path (src/redis/confirmed-writes.ts): the script runs by runScript like every
 * other, then WAIT on the same connection; a change needs enough replicas, a refusal none, and a
 * server that lost the script (SCRIPT FLUSH) gets it again with a WAIT of its own.
 */
import t, { type Test } from 'tap'
import { runConfirmed } from '../../src/redis/confirmed-writes.js'
import { NodeError } from '../../src/redis/errors.js'
import { callArgs, loadedScript } from '../../src/redis/script-call.js'
import { startRedis } from '../../harness/redis-server.js'
import { until } from '../helpers/until.js'

/** Sets KEYS[1] to ARGV[1] unless it exists: { 1 } changed, { -1 } refused. */
const SET_NEW = loadedScript("if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return { 1 } end return { -1 }", 1)
const changed = (reply: unknown) => Array.isArray(reply) && reply[0] === 1

async function primaryWithReplica(t: Test) {
  // Diskless full sync starts after 5 s by default: at once here.
  const primary = await startRedis({ t, args: ['--repl-diskless-sync-delay', '0'] })
  await startRedis({ t, args: ['--replicaof', '127.0.0.1', String(primary.port)] })
  const client = primary.client()
  t.teardown(() => client.disconnect())
  // In sync once it acknowledges a write (state=online can come before it answers WAIT in time).
  const acknowledges = async () => {
    await client.set('sync-probe', String(Date.now()))
    return (await client.wait(1, 200)) === 1
  }
  await until(acknowledges, 'the replica is in sync', 15_000)
  return { primary, client }
}

t.test('a change confirmed by the replica answers; one more replica than there is: unavailable, after the write', async (t) => {
  const { client } = await primaryWithReplica(t)
  const one = { replicas: 1, waitMs: 2000, changed }
  t.same(await runConfirmed(client, SET_NEW, callArgs(SET_NEW, ['a'], ['x']), one), [1], 'confirmed by the one replica')
  const started = performance.now()
  const err = await runConfirmed(client, SET_NEW, callArgs(SET_NEW, ['b'], ['x']), { ...one, replicas: 2, waitMs: 500 }).catch(
    (e: unknown) => e,
  )
  t.ok(err instanceof NodeError, 'a NodeError')
  t.equal((err as NodeError).reason, 'unavailable')
  t.match((err as NodeError).message, /only 1 of 2 replicas confirmed the write within 500 ms \(REDIS_WAIT_REPLICAS\)/)
  t.ok(performance.now() - started >= 450, 'WAIT waited for the missing replica')
  t.equal(await client.get('b'), 'x', 'the script did run: the caller rolls back')
})

t.test('a refusal needs no confirmation: answered even when no replica could confirm', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.set('taken', 'y')
  const reply = await runConfirmed(client, SET_NEW, callArgs(SET_NEW, ['taken'], ['x']), { replicas: 1, waitMs: 300, changed })
  t.same(reply, [-1], 'the refusal, not an error')
})

t.test('after SCRIPT FLUSH: sent again in full, and confirmed by the WAIT that follows it', async (t) => {
  const { client } = await primaryWithReplica(t)
  const one = { replicas: 1, waitMs: 2000, changed }
  t.same(await runConfirmed(client, SET_NEW, callArgs(SET_NEW, ['c'], ['x']), one), [1])
  await client.script('FLUSH')
  t.same(await runConfirmed(client, SET_NEW, callArgs(SET_NEW, ['d'], ['x']), one), [1], 'NOSCRIPT retried, then confirmed')
  t.same(await client.script('EXISTS', SET_NEW.sha), [1], 'the server has the script again')
})
