import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { lockctl } from '../helpers/lockctl.js'

t.test('lockctl --lock-delay: passed on; a lapsed hold refuses with 75, a run that releases leaves none', async (t) => {
  const { app } = await startApp(t, [(await startRedis({ t })).url], { logLevel: 'warn' })
  const opts = { url: await app.listen({ port: 0, host: '127.0.0.1' }) }
  const acquired = await lockctl(['acquire', 'delay:cli', '--ttl', '200ms', '--lock-delay', '3s'], opts)
  t.equal(acquired.code, 0, acquired.stderr)
  await sleep(350)
  const refused = await lockctl(['acquire', 'delay:cli'], opts)
  t.equal(refused.code, 75, 'in its lock-delay: not obtained (75)')
  t.match(refused.stderr, /lock_delayed/, 'the refusal says why')
  const ran = await lockctl(['run', 'delay:run', '--lock-delay', '5s', '--', 'true'], opts)
  t.equal(ran.code, 0, ran.stderr)
  t.equal((await lockctl(['acquire', 'delay:run'], opts)).code, 0, "run's own release never delays")
  t.equal((await lockctl(['acquire', 'delay:bad', '--lock-delay', 'soon'], opts)).code, 64, 'a bad duration is a usage error')
})
