/**
 * How many Redis commands the lock scripts run per call, in the cases the benchmarks exercise: from
 * INFO commandstats around many script calls on a fresh redis-server (commands a script runs count
 * there, the EVALSHA itself left out), and the time a call takes inside Redis (EVALSHA's
 * usec_per_call: the script and its commands, not the network).
 *
 *   node --import tsx bench/script-calls.ts [--n 200]
 *
 * Cases: an uncontended exclusive acquire (a new key) and its release; an acquire refused because
 * another token holds the lock (the contended 409 path).
 */
import { parseArgs } from 'node:util'
import { defaultConfig } from '../src/config.js'
import { keyCountOf, loadScripts } from '../src/redis/scripts.js'
import { lockKeys, GONE_MEMORY_MS } from '../src/locks/keys.js'
import { lostChannel } from '../src/locks/watch.js'
import { WAITER_LEASE_MS, wakePrefix } from '../src/locks/waiting.js'
import { fenceHint } from '../src/locks/fence-hint.js'
import { startRedis } from '../harness/redis-server.js'

const { values } = parseArgs({ options: { n: { type: 'string', default: '200' } } })
const n = Number(values.n)

const redis = await startRedis()
const client = redis.client()
const scripts = loadScripts({
  FENCE_RETENTION_MS: defaultConfig.fenceRetentionMs,
  MAX_READERS: 1000,
  MAX_WAITERS: 1000,
  WAITER_LEASE_MS,
  WAKE_PREFIX: wakePrefix('ls:'),
  GONE_MEMORY_MS,
  LOST_CHANNEL: lostChannel('ls:'),
})
for (const [name, lua] of scripts) client.defineCommand(name, { numberOfKeys: keyCountOf(name), lua })
/** One call of a script defined above. */
function script(name: 'acquire' | 'release', ...args: (string | number)[]): Promise<unknown> {
  const command = (client as unknown as Record<string, ((...a: (string | number)[]) => Promise<unknown>) | undefined>)[name]
  if (!command) throw new Error(`no script ${name}`)
  return command.apply(client, args)
}

const acquireArgs = (token: string, attempt: string) => ['write', token, 30_000, attempt, fenceHint()]

/** Commands per script call while `run` makes `calls` script calls. */
async function perCall(
  calls: number,
  run: () => Promise<void>,
): Promise<{ commands: number; usecPerCall: number; byCommand: Record<string, number> }> {
  await client.config('RESETSTAT')
  await run()
  const stats = (await client.info('commandstats')) as string
  const byCommand: Record<string, number> = {}
  let commands = 0
  // Time inside Redis per script call (its commands and the Lua around them; not the network).
  const usecPerCall = Number(/^cmdstat_evalsha:.*usec_per_call=([\d.]+)/m.exec(stats)?.[1] ?? NaN)
  for (const [, name, count] of stats.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
    if (['evalsha', 'eval', 'config', 'config|resetstat', 'info', 'script|load', 'script'].includes(name as string)) continue
    byCommand[name as string] = Number(count) / calls
    commands += Number(count)
  }
  return { commands: commands / calls, usecPerCall, byCommand }
}

const keys = (i: number) => lockKeys('ls:', 'lock', `calls.${i}`).all.slice(0, keyCountOf('acquire'))
const report: Record<string, unknown> = {}
report['acquire, uncontended (new key)'] = await perCall(n, async () => {
  for (let i = 0; i < n; i++) await script('acquire', ...keys(i), ...acquireArgs('tokenA-0123456789abc', `a${i}`))
})
report['release, uncontended'] = await perCall(n, async () => {
  for (let i = 0; i < n; i++) await script('release', ...keys(i), 'write', 'tokenA-0123456789abc', fenceHint())
})
await script('acquire', ...keys(-1), ...acquireArgs('tokenA-0123456789abc', 'held'))
report['acquire, held by another (409)'] = await perCall(n, async () => {
  for (let i = 0; i < n; i++) await script('acquire', ...keys(-1), ...acquireArgs('tokenB-0123456789abc', `b${i}`))
})
for (const [name, r] of Object.entries(report)) process.stdout.write(`${name}: ${JSON.stringify(r)}\n`)
client.disconnect()
await redis.stop()
