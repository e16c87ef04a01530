/**
 * A refused attempt on a quorum is undone where it applied, and only there. The vote settles once a
 * majority refused; the slowest node's answer comes later, and that node is sent a rollback only if
 * its answer shows the attempt applied there (it granted, or gave no answer). On a contended lock or
 * a hot key's line that node nearly always refuses too, and a rollback there would be a wasted call.
 */
import t, { type Test } from 'tap'
import { monitorRedis, type MonitoredCommand } from '../helpers/monitor.js'
import type { Latency } from '../../harness/tcp-proxy.js'
import { proxiedQuorum } from '../helpers/proxied-quorum.js'
import { until } from '../helpers/until.js'

const NODE_TIMEOUT_MS = 600
/** Node 2's link each way: slower than the vote (which settles on the other two), faster than the node timeout. */
const SLOW_MS = 150

/** The scripts a client (not Lua) ran on a node naming `key`'s lock. */
function scriptCalls(commands: readonly MonitoredCommand[], key: string): MonitoredCommand[] {
  return commands.filter((c) => c.source !== 'lua' && /^eval/i.test(c.args[0] ?? '') && c.args.some((a) => a.endsWith(`{${key}}`)))
}

/** Whether a node holds anything of `key`'s lock (its hold or hash). */
async function holdsOn(node: { client(): import('ioredis').Redis }, key: string): Promise<boolean> {
  const client = node.client()
  try {
    return (await client.exists(`lock-service:lock:{${key}}`)) === 1
  } finally {
    client.disconnect()
  }
}

t.test('a refused attempt is undone where it applied, and only there', async (t) => {
  const { app, nodes, proxies } = await proxiedQuorum(t, { nodeTimeoutMs: NODE_TIMEOUT_MS, logLevel: 'warn' })
  const slow = nodes[2]!
  const acquire = (key: string, token: string) =>
    app.inject({ method: 'POST', url: `/locks/${key}?ttl=30s`, headers: { 'lock-token': token } })

  /**
   * `key` granted to a holder on every node; `lost`: then lost by the slow node (a restart without
   * persistence, say: free there, held on the other two). Then the slow node's link gets `latency`,
   * and what it runs from then on is recorded.
   */
  async function setUp(t: Test, key: string, lost: boolean, latency: Latency) {
    t.equal((await acquire(key, `holder-token-${key}-0000`)).statusCode, 201, 'granted')
    await until(() => holdsOn(slow, key), 'held on the slow node too')
    if (lost) {
      const direct = slow.client()
      await direct.flushall()
      direct.disconnect()
    }
    proxies[2]!.setLatency(latency)
    t.teardown(() => proxies[2]!.setLatency(undefined))
    const monitor = await monitorRedis([slow.port])
    t.teardown(() => monitor.close())
    const calls = () => scriptCalls(monitor.commands, key)
    /** Waits (up to `ms`) until the slow node ran the acquire and a rollback and holds nothing of `key`. */
    const rolledBack = async (what: string, ms: number) => {
      await until(async () => calls().length >= 2 && !(await holdsOn(slow, key)), what, ms)
      t.equal(calls().length, 2, 'the acquire, then its rollback')
    }
    return { calls, rolledBack }
  }

  t.test('every node refuses: the slowest is sent no rollback', async (t) => {
    const { calls } = await setUp(t, 'all-refuse', false, { up: { ms: SLOW_MS }, down: { ms: SLOW_MS } })
    const started = Date.now()
    t.equal((await acquire('all-refuse', 'other-token-0000000002')).statusCode, 409, 'refused')
    t.ok(Date.now() - started < 2 * SLOW_MS, 'answered once the two fast nodes refused')
    // Long enough for the slow node's answer to come back and a rollback to reach it.
    await new Promise((resolve) => setTimeout(resolve, 4 * SLOW_MS + 200))
    t.equal(calls().length, 1, `the slow node ran the acquire and nothing else (${calls().length} script calls)`)
    t.ok(await holdsOn(slow, 'all-refuse'), "it still holds the holder's lock")
  })

  t.test('the slowest node granted after the vote settled: it is rolled back', async (t) => {
    const { rolledBack } = await setUp(t, 'late-grant', true, { up: { ms: SLOW_MS }, down: { ms: SLOW_MS } })
    t.equal((await acquire('late-grant', 'other-token-0000000004')).statusCode, 409, 'refused by the majority')
    await rolledBack('the slow node ran the acquire, then gave the late grant back', 3000)
  })

  t.test('the slowest node gave no answer in time: it is rolled back all the same', async (t) => {
    // Its acquire arrives after the node timeout: it applies there later, and must be undone.
    const { rolledBack } = await setUp(t, 'no-answer', true, { up: { ms: NODE_TIMEOUT_MS + 200 } })
    t.equal((await acquire('no-answer', 'other-token-0000000006')).statusCode, 409, 'refused by the majority')
    await rolledBack('the slow node ran the acquire late, then its rollback', 5000)
  })
})
