import { existsSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { fileText, spawnLockctl, until } from '../helpers/lockctl.js'
import { startRedis } from '../../harness/redis-server.js'

// lockctl run with sessions and the lost-lock signal (issue #16).
const redis = await startRedis({ t })
const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
const url = await app.listen({ port: 0, host: '127.0.0.1' })
const opts = { url }
const sh = (script: string) => ['--', 'sh', '-c', script]
const gate = (dir: string, name: string) => `touch ${dir}/${name}.started; while [ ! -e ${dir}/${name}.go ]; do sleep 0.02; done`
const started = (dir: string, name: string) => until(`${name} to start`, () => existsSync(`${dir}/${name}.started`))
const sessionsOpen = async () =>
  Number(/^lock_sessions_opened_total (\d+)/m.exec(String((await app.inject({ url: '/metrics' })).body))?.[1] ?? 0)

t.test('run binds its hold to a session kept alive in the background, and closes it at the end', async (t) => {
  const dir = t.testdir()
  const before = await sessionsOpen()
  const run = spawnLockctl(
    ['run', 'ls:bound', '--ttl', '1s', '--owner', 'nightly', ...sh(`echo $LOCK_FENCE > ${dir}/fence; ${gate(dir, 'cmd')}`)],
    opts,
  )
  await started(dir, 'cmd')
  t.equal(await sessionsOpen(), before + 1, 'one session for the run')
  // Three TTLs later the 1 s hold is still held, with the same fence: the keepalive renews it.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  const state = await request(url, 'GET', '/locks/ls:bound')
  t.equal(state.status, 200, 'held after 3 s of a 1 s lease')
  t.equal(state.body.fence, Number(fileText(`${dir}/fence`)))
  t.equal(state.body.owner, 'nightly', '--owner labels the hold')
  writeFileSync(`${dir}/cmd.go`, '')
  const done = await run.done
  t.equal(done.code, 0, done.stderr)
  t.equal((await request(url, 'GET', '/locks/ls:bound')).status, 404, 'released')
})

t.test('a force-release stops CMD at once (exit 70), not at the next renewal', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(['run', 'ls:forced', '--ttl', '60s', '--grace', '1s', ...sh(gate(dir, 'cmd'))], opts)
  await started(dir, 'cmd')
  await new Promise((resolve) => setTimeout(resolve, 300)) // the watch is parked
  const forcedAt = performance.now()
  t.equal((await request(url, 'DELETE', '/locks/ls:forced?force=true')).status, 200)
  const done = await run.done
  const stoppedAfter = performance.now() - forcedAt
  t.equal(done.code, 70, 'exit 70: the lock was lost')
  t.match(done.stderr, /lost the lock: the service says it was force_released at/, 'says why')
  t.ok(stoppedAfter < 5000, `CMD stopped ${Math.round(stoppedAfter)} ms after the force-release (the next renewal was ~20 s away)`)
})

t.test('a wait in line longer than the TTL: the session is kept alive meanwhile', async (t) => {
  const dir = t.testdir()
  const holder = await request(url, 'POST', '/locks/ls:waited?ttl=1500ms')
  t.equal(holder.status, 201)
  const run = spawnLockctl(['run', 'ls:waited', '--ttl', '500ms', '--wait', '5s', ...sh(`echo ran > ${dir}/ran`)], opts)
  const done = await run.done
  t.equal(done.code, 0, `granted once the holder lapsed, after three of its own TTLs: ${done.stderr}`)
  t.equal(fileText(`${dir}/ran`)?.trim(), 'ran')
})
