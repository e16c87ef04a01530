/**
 * A refused attempt on a quorum is undone where it applied, and only there. The vote settles once a
 * majority refused; the slowest node's answer comes later, and that node is sent a rollback only if
 * its answer shows the attempt applied there (it granted, or gave no answer). On a contended lock or
 * a hot key's line that node nearly always refuses too, and a rollback there would be a wasted call.
 */
import t from 'tap'
import { monitorRedis, type MonitoredCommand } from '../helpers/monitor.js'
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

  t.test('every node refuses: the slowest is sent no rollback', async (t) => {
    t.equal((await acquire('all-refuse', 'holder-token-000000001')).statusCode, 201, 'granted')
    await until(() => holdsOn(slow, 'all-refuse'), 'held on the slow node too')
    proxies[2]!.setLatency({ up: { ms: SLOW_MS }, down: { ms: SLOW_MS } })
    t.teardown(() => proxies[2]!.setLatency(undefined))
    const monitor = await monitorRedis([slow.port])
    t.teardown(() => monitor.close())
    const started = Date.now()
    const refused = await acquire('all-refuse', 'other-token-0000000002')
    t.equal(refused.statusCode, 409, 'refused')
    t.ok(Date.now() - started < 2 * SLOW_MS, 'answered once the two fast nodes refused')
    // Long enough for the slow node's answer to come back and a rollback to reach it.
    await new Promise((resolve) => setTimeout(resolve, 4 * SLOW_MS + 200))
    const calls = scriptCalls(monitor.commands, 'all-refuse')
    t.equal(calls.length, 1, `the slow node ran the acquire and nothing else (${calls.length} script calls)`)
    t.ok(await holdsOn(slow, 'all-refuse'), "it still holds the holder's lock")
  })

  t.test('the slowest node granted after the vote settled: it is rolled back', async (t) => {
    t.equal((await acquire('late-grant', 'holder-token-000000003')).statusCode, 201, 'granted')
    await until(() => holdsOn(slow, 'late-grant'), 'held on the slow node too')
    // The slow node lost it (a restart without persistence, say): free there, held on the other two.
    const direct = slow.client()
    await direct.flushall()
    direct.disconnect()
    proxies[2]!.setLatency({ up: { ms: SLOW_MS }, down: { ms: SLOW_MS } })
    t.teardown(() => proxies[2]!.setLatency(undefined))
    const monitor = await monitorRedis([slow.port])
    t.teardown(() => monitor.close())
    t.equal((await acquire('late-grant', 'other-token-0000000004')).statusCode, 409, 'refused by the majority')
    await until(
      async () => scriptCalls(monitor.commands, 'late-grant').length >= 2 && !(await holdsOn(slow, 'late-grant')),
      'the slow node ran the acquire, then gave the late grant back',
      3000,
    )
    t.equal(scriptCalls(monitor.commands, 'late-grant').length, 2, 'the acquire, then its rollback')
  })

  t.test('the slowest node gave no answer in time: it is rolled back all the same', async (t) => {
    t.equal((await acquire('no-answer', 'holder-token-000000005')).statusCode, 201, 'granted')
    await until(() => holdsOn(slow, 'no-answer'), 'held on the slow node too')
    const direct = slow.client()
    await direct.flushall()
    direct.disconnect()
    // Its acquire arrives after the node timeout: it applies there later, and must be undone.
    proxies[2]!.setLatency({ up: { ms: NODE_TIMEOUT_MS + 200 } })
    t.teardown(() => proxies[2]!.setLatency(undefined))
    const monitor = await monitorRedis([slow.port])
    t.teardown(() => monitor.close())
    t.equal((await acquire('no-answer', 'other-token-0000000006')).statusCode, 409, 'refused by the majority')
    await until(
      async () => scriptCalls(monitor.commands, 'no-answer').length >= 2 && !(await holdsOn(slow, 'no-answer')),
      'the slow node ran the acquire late, then its rollback',
      5000,
    )
    t.equal(scriptCalls(monitor.commands, 'no-answer').length, 2, 'the acquire, then its rollback')
  })
})
