import t from 'tap'
import { Command } from 'ioredis'
import { callArgs, loadedScript, resp, runScript } from '../../src/redis/script-call.js'
import { startRedis } from '../../harness/redis-server.js'

/** Counts its calls in KEYS[1], then answers its arguments and a number (so the reply's types show). */
const ECHO = loadedScript("local n = redis.call('INCR', KEYS[1]) return { n, ARGV[1], ARGV[2], KEYS[2] }", 2)
/** Sets KEYS[1] to ARGV[1]. */
const SETTER = loadedScript("redis.call('SET', KEYS[1], ARGV[1]) return 1", 1)
/** Counts its calls, then fails: a script error must not be sent again. */
const FAILING = loadedScript("redis.call('INCR', KEYS[1]) return redis.error_reply('ERR refused on purpose')", 1)

t.test('a script runs by EVALSHA with its keys and arguments; numbers go as strings, replies come as strings', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  t.same(await runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['a', 42])), [1, 'a', '42', 'k2'])
  t.same(await client.script('EXISTS', ECHO.sha), [1], 'the server has cached it under its SHA-1')
  t.same(await runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['b', 7])), [2, 'b', '7', 'k2'])
})

t.test('commands are written as ioredis writes them, byte counts right for any text', async (t) => {
  const cases = [
    ['sha', '2', 'ls:{lock:a.b}:h', 'ls:{lock:a.b}:f', 'write', 'tokenA-0123456789abc', '30000', ''],
    ['sha', '1', 'k', 'héllo — owner 🙂', '\u00ff', 'lone \ud800 surrogate'],
    // Around the longest length header made in advance (255), in characters and in bytes.
    ['sha', '1', 'k'.repeat(255), 'k'.repeat(256), 'é'.repeat(128), 'x'.repeat(70_000)],
    [],
  ]
  for (const args of cases) {
    const ioredis = new Command('evalsha', [])
    ioredis.args = args
    t.equal(resp('evalsha', args), ioredis.toWritable(undefined as never), `${args.length} arguments`)
  }
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  t.same(await runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['owner — 🙂', 'ünïcödé'])), [1, 'owner — 🙂', 'ünïcödé', 'k2'])
})

t.test('on a server that never saw it, a call runs before the commands sent after it (first sent in full)', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await client.ping()
  t.same(await client.script('EXISTS', SETTER.sha), [0])
  // Not awaited (as the service's bookkeeping calls are): the GET right after it must see its write.
  const set = runScript(client, SETTER, callArgs(SETTER, ['k'], ['v1']))
  t.equal(await client.get('k'), 'v1')
  t.equal(await set, 1)
  t.same(await client.script('EXISTS', SETTER.sha), [1])
})

t.test('a server without the script (SCRIPT FLUSH, a restart) runs it once by EVAL, and has it again', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['x', 1]))
  await client.script('FLUSH')
  t.same(await client.script('EXISTS', ECHO.sha), [0])
  // Several calls in flight at once all get NOSCRIPT, and each runs exactly once.
  const replies = await Promise.all([1, 2, 3].map((i) => runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['y', i]))))
  t.same(replies.map((r) => (r as unknown[])[2]).sort(), ['1', '2', '3'])
  t.equal(Number(await client.get('calls')), 4, 'every call ran once: NOSCRIPT means nothing ran')
  t.same(await client.script('EXISTS', ECHO.sha), [1], 'cached again')
})

t.test('any other error is the caller’s, and the script is not sent again', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client()
  t.teardown(() => client.disconnect())
  await t.rejects(runScript(client, FAILING, callArgs(FAILING, ['calls'], [])), /refused on purpose/)
  t.equal(Number(await client.get('calls')), 1, 'ran once')
})

t.test('a connection that is down rejects at once, without a retry', async (t) => {
  const redis = await startRedis({ t })
  const client = redis.client({ maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  client.on('error', () => undefined)
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  client.disconnect()
  await t.rejects(runScript(client, ECHO, callArgs(ECHO, ['calls', 'k2'], ['z', 1])), /closed|writeable|connect/i)
})
