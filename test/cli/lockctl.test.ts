import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { lockKeys } from '../../src/locks/keys.js'
import { parse } from '../../src/cli/args.js'
import { UsageError } from '../../src/cli/exit.js'
import { startApp } from '../../harness/app.js'
import { writeAuthFile } from '../helpers/auth-file.js'
import { History } from '../../harness/history.js'
import { request } from '../../harness/http.js'
import { fileText, lockctl, processAlive, spawnLockctl, startProxy, until } from '../helpers/lockctl.js'
import { freePort, startRedis } from '../../harness/redis-server.js'

// One Redis and one open service for most tests; each test uses its own lock keys.
const redis = await startRedis({ t })
const { app, config } = await startApp(t, [redis.url], { logLevel: 'warn' })
const url = await app.listen({ port: 0, host: '127.0.0.1' })
const opts = { url }
const sh = (script: string) => ['--', 'sh', '-c', script]
const get = (p: string) => request(url, 'GET', p)
const post = (p: string, token?: string) => request(url, 'POST', p, token ? { token } : {})
const del = (p: string, token: string) => request(url, 'DELETE', p, { token })
/** A CMD script that marks `name` started, then runs until the test creates `name`.go. */
const gate = (dir: string, name: string) => `touch ${dir}/${name}.started; while [ ! -e ${dir}/${name}.go ]; do sleep 0.02; done`
const started = (dir: string, name: string) => until(`${name} to start`, () => existsSync(`${dir}/${name}.started`))
const open = (dir: string, name: string) => writeFileSync(`${dir}/${name}.go`, '')
/** What `lockctl run` must never outlast by much: a generous no-hang bound. */
const NO_HANG_MS = 15_000

/** Removes every Redis key of the lock, as if Redis lost it: the next renew answers 404. */
async function wipe(namespace: 'lock' | 'rw', key: string): Promise<void> {
  const client = redis.client()
  try {
    await client.del(...lockKeys(config.keyPrefix, namespace, key).all)
  } finally {
    client.disconnect()
  }
}

t.test('a token, API key or prefix that starts with "-" is a value, not an option', async (t) => {
  const token = '-starts-with-a-dash-01'
  t.match(parse(['release', 'k', '--token', token], {}), { command: 'release', lockKey: 'k', token })
  t.match(parse(['renew', 'k', '--token', token, '--ttl', '5s', '--key', '-secret'], {}), { token, ttl: '5s', key: '-secret' })
  t.match(parse(['list', '--prefix', '-jobs:'], {}), { prefix: '-jobs:' })
  t.throws(() => parse(['acquire', 'k', '--ttl', '-5s'], {}), UsageError, 'a negative duration is still refused')
})

t.test('usage errors exit 64 before any request; --help documents every command and exit code', async (t) => {
  const cases: string[][] = [
    [],
    ['frobnicate'],
    ['run', 'k'],
    ['run', 'k', 'echo', 'hi'],
    ['run', 'k', '--'],
    ['run', 'bad key!', '--', 'true'],
    ['run', 'k', '--ttl', 'soon', '--', 'true'],
    ['run', 'k', '--grace', '-1', '--', 'true'],
    ['acquire'],
    ['acquire', 'k', '--read', '--write'],
    ['acquire', 'k', '--bogus'],
    ['acquire', 'k', '--ttl'],
    ['acquire', 'k', '--wait', '1 m'],
    ['acquire', 'k', '--', 'true'],
    ['renew', 'k'],
    ['release', 'k', '--token', 'short'],
    ['status', 'k', '--ttl', '1s'],
    ['status', 'k', 'extra'],
    ['list', 'extra'],
    ['list', '--limit', '0'],
    ['list', '--prefix', 'no spaces'],
    ['acquire', 'k', '--url', 'ftp://example.com'],
    ['acquire', 'k', '--url', 'not a url'],
  ]
  // Every case, in process (cheap)...
  for (const args of cases) {
    t.throws(() => parse(args, {}), UsageError, `lockctl ${args.join(' ')}: usage error`)
  }
  // ...and a few end to end. A closed port: had any of them made a request, it would exit 69.
  const closed = `http://127.0.0.1:${await freePort()}`
  const some = [cases[0]!, cases[3]!, cases[10]!, cases[14]!]
  const results = await Promise.all(some.map((args) => lockctl(args, { url: closed })))
  results.forEach((r, i) => {
    const label = `lockctl ${some[i]!.join(' ')}`
    t.equal(r.code, 64, `${label}: exit 64 (${r.stderr.split('\n')[0]})`)
    t.match(r.stderr, /^lockctl: /, `${label}: says why on stderr`)
    t.equal(r.stdout, '', `${label}: nothing on stdout`)
  })

  const badTtl = await lockctl(['acquire', 'usage-ttl', '--ttl', '50ms'], opts)
  t.equal(badTtl.code, 64, 'the service refusing a request (400 invalid_request) is a usage error too')
  t.match(badTtl.stderr, /ttl/)
  t.equal((await get('/locks/usage-ttl')).status, 404, 'nothing was acquired')
  const longWait = await lockctl(['acquire', 'usage-wait', '--wait', '5m'], opts)
  t.equal(longWait.code, 64, 'a wait over MAX_WAIT_MS: a usage error')
  t.equal(longWait.stderr.split('(MAX_WAIT_MS)').length - 1, 1, `the service's reason is said once: ${longWait.stderr.split('\n')[0]}`)

  const help = await lockctl(['--help'])
  t.equal(help.code, 0)
  for (const word of [
    'run',
    'acquire',
    'renew',
    'release',
    'status',
    'list',
    'LOCK_FENCE',
    'LOCK_KEY',
    'LOCK_SERVICE_URL',
    'LOCK_SERVICE_KEY',
    'Exit codes',
    '64',
    '69',
    '70',
    '75',
  ]) {
    t.ok(help.stdout.includes(word), `--help mentions ${word}`)
  }
  t.equal((await lockctl(['help'])).stdout, help.stdout, '`lockctl help` prints the same')
})

t.test('run: CMD gets LOCK_KEY, LOCK_FENCE and LOCK_TOKEN; lockctl exits with its code; the lock is released', async (t) => {
  const [three, killed, args] = await Promise.all([
    lockctl(['run', 'run:env', ...sh('echo "$LOCK_KEY $LOCK_FENCE $LOCK_TOKEN"; exit 3')], opts),
    lockctl(['run', 'run:killed', ...sh('kill -KILL $$')], opts),
    lockctl(['run', 'run:args', '--', 'node', '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', 'a b', '--ttl', '-x'], opts),
  ])
  t.equal(three.code, 3, "CMD's exit code 3")
  const [key, fence, token] = three.stdout.trim().split(' ')
  t.equal(key, 'run:env')
  t.match(fence, /^[1-9]\d*$/, 'LOCK_FENCE is a positive integer')
  t.match(token, /^[A-Za-z0-9_-]{16,}$/, 'LOCK_TOKEN is the owner token')
  t.equal(three.stderr, '', 'nothing on stderr')
  t.equal(killed.code, 128 + 9, 'CMD killed by SIGKILL: 137')
  t.equal(args.code, 0)
  t.same(JSON.parse(args.stdout), ['a b', '--ttl', '-x'], 'everything after -- reaches CMD untouched')
  for (const k of ['run:env', 'run:killed', 'run:args']) t.equal((await get(`/locks/${k}`)).status, 404, `${k}: released after CMD exited`)

  const zero = await lockctl(['run', 'run:env', '--ttl', '5s', ...sh('echo $LOCK_FENCE')], opts)
  t.equal(zero.code, 0, "CMD's exit code 0")
  t.ok(Number(zero.stdout) > Number(fence), 'the next run has a higher fence')
  t.equal((await get('/locks/run:env')).status, 404)
})

t.test('run: the lock is held (same fence) while CMD runs and released once it exits', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(['run', 'run:held', '--ttl', '10s', ...sh(`echo $LOCK_FENCE > ${dir}/fence; ${gate(dir, 'cmd')}`)], opts)
  await started(dir, 'cmd')
  const fence = Number(fileText(`${dir}/fence`))
  const state = await get('/locks/run:held')
  t.equal(state.status, 200, 'held while CMD runs')
  t.equal(state.body.fence, fence, 'with the fence CMD was given')
  t.equal((await post('/locks/run:held')).body.error, 'lock_held', 'nobody else gets it')
  open(dir, 'cmd')
  const done = await run.done
  t.equal(done.code, 0)
  t.equal((await get('/locks/run:held')).status, 404, 'released after CMD exited')
})

t.test('exit 75 when someone else holds the lock (no wait, and after a short --wait); --wait gets it once freed', async (t) => {
  const dir = t.testdir()
  const holder = await post('/locks/run:busy?ttl=20s')
  t.equal(holder.status, 201)
  const now = await lockctl(['run', 'run:busy', '--', 'touch', `${dir}/ran`], opts)
  t.equal(now.code, 75, 'no wait: 75')
  t.match(now.stderr, /^lockctl: run run:busy: held by someone else.*\(lock_held\)\n$/, 'one line on stderr')
  const waited = await lockctl(['run', 'run:busy', '--wait', '300ms', '--', 'touch', `${dir}/ran`], opts)
  t.equal(waited.code, 75, 'the wait ran out: 75')
  t.match(waited.stderr, /after waiting \d+ ms/)
  t.notOk(existsSync(`${dir}/ran`), 'CMD never ran')
  const acquired = await lockctl(['acquire', 'run:busy'], opts)
  t.equal(acquired.code, 75, 'acquire: 75 too')
  t.equal((await get('/locks/run:busy')).body.fence, holder.body.fence, 'the holder still holds it')

  // Its wait outlasts the 300 ms TTL it asks for: the grant's validity window is re-anchored by a
  // renew before CMD starts, so the run does not count its lock as lost at once.
  const patient = spawnLockctl(['run', 'run:busy', '--ttl', '300ms', '--wait', '20s', ...sh('sleep 0.6; echo $LOCK_FENCE')], opts)
  await until('lockctl to wait in line', async () => (await get('/locks/run:busy')).body.waiters === 1)
  await new Promise((r) => setTimeout(r, 300))
  await del('/locks/run:busy', holder.body.token as string)
  const done = await patient.done
  t.equal(done.code, 0, 'granted once the holder released, and kept for the whole run')
  t.equal(done.stderr, '')
  t.ok(Number(done.stdout) > (holder.body.fence as number), 'with a higher fence')
})

t.test('--read runs share the lock, --write excludes them (and exclusive locks are another namespace)', async (t) => {
  const dir = t.testdir()
  const reader = spawnLockctl(['run', 'rw:doc', '--read', '--ttl', '10s', ...sh(gate(dir, 'reader'))], opts)
  await started(dir, 'reader')
  const [second, writer, exclusive] = await Promise.all([
    lockctl(['run', 'rw:doc', '--read', ...sh('echo $LOCK_FENCE')], opts),
    lockctl(['run', 'rw:doc', '--write', '--', 'true'], opts),
    lockctl(['run', 'rw:doc', '--', 'true'], opts),
  ])
  t.equal(second.code, 0, 'a second reader runs meanwhile')
  t.equal(writer.code, 75, 'a writer does not')
  t.equal(exclusive.code, 0, '/locks/rw:doc is not /rwlocks/rw:doc')
  open(dir, 'reader')
  t.equal((await reader.done).code, 0)

  const w = spawnLockctl(['run', 'rw:doc', '--write', ...sh(gate(dir, 'writer'))], opts)
  await started(dir, 'writer')
  t.equal((await get('/rwlocks/rw:doc')).body.readers, 0)
  const [r, w2] = await Promise.all([
    lockctl(['run', 'rw:doc', '--read', '--', 'true'], opts),
    lockctl(['run', 'rw:doc', '--write', '--', 'true'], opts),
  ])
  t.equal(r.code, 75, 'no reader while the writer runs')
  t.equal(w2.code, 75, 'nor another writer')
  open(dir, 'writer')
  t.equal((await w.done).code, 0)
  t.equal((await get('/rwlocks/rw:doc')).status, 404, 'all released')
})

t.test('renewals keep a 300 ms lock held for a 1.2 s CMD; nobody else gets it meanwhile', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(
    ['run', 'renew:short', '--ttl', '300ms', ...sh(`echo $LOCK_FENCE > ${dir}/fence; sleep 1.2; touch ${dir}/end`)],
    opts,
  )
  const fence = Number(await until('CMD to start', () => fileText(`${dir}/fence`)))
  const seen: string[] = []
  let polls = 0
  while (!existsSync(`${dir}/end`)) {
    const state = await get('/locks/renew:short')
    const other = await post('/locks/renew:short')
    if (existsSync(`${dir}/end`)) {
      // CMD ended and lockctl released between the two requests: the probe itself took the lock.
      if (other.status === 201) await request(url, 'DELETE', '/locks/renew:short', { token: other.body.token as string })
      break
    }
    polls++
    if (state.status !== 200 || state.body.fence !== fence || other.status !== 409)
      seen.push(`${state.status} fence ${String(state.body.fence)} / other ${other.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  t.ok(polls >= 5, `${polls} checks while CMD ran`)
  t.same(seen, [], 'held with the same fence at every check, and every other acquire was refused')
  const done = await run.done
  t.equal(done.code, 0)
  t.equal(done.stderr, '', 'no renewal trouble reported')
  t.equal((await get('/locks/renew:short')).status, 404, 'released')
})

t.test('lock lost (its Redis keys vanish): CMD and its children are terminated, exit 70', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(
    ['run', 'lost:wiped', '--ttl', '1s', ...sh(`echo $$ > ${dir}/pid; sleep 30 & echo $! > ${dir}/child; wait`)],
    opts,
  )
  const pid = Number(await until('CMD to start', () => fileText(`${dir}/child`) && fileText(`${dir}/pid`)))
  const child = Number(fileText(`${dir}/child`))
  t.ok(processAlive(pid) && processAlive(child), 'CMD and its child run')
  await wipe('lock', 'lost:wiped')
  const done = await run.done
  t.equal(done.code, 70, 'exit 70')
  // Whichever notices first: the next renewal (404) or the watch (the hold is gone: expired).
  t.match(done.stderr, /lost the lock: (the renew answered 404 lock_not_found|the service says it was expired at)/, 'a clear message')
  t.ok(done.elapsedMs < NO_HANG_MS)
  t.notOk(processAlive(pid), 'CMD was terminated')
  t.notOk(processAlive(child), "and so was CMD's child (the whole process group)")
})

t.test('lock lost (renewals fail until the validity runs out): CMD is terminated, exit 70', async (t) => {
  const dir = t.testdir()
  const proxy = await startProxy(new URL(url).host)
  t.teardown(() => proxy.close())
  const run = spawnLockctl(['run', 'lost:unreachable', '--ttl', '600ms', ...sh(`echo $$ > ${dir}/pid; exec sleep 30`)], { url: proxy.url })
  const pid = Number(await until('CMD to start', () => fileText(`${dir}/pid`)))
  proxy.cut()
  const done = await run.done
  t.equal(done.code, 70)
  t.match(done.stderr, /renew failed: .*retrying/, 'reports the failing renewals')
  t.match(done.stderr, /lost the lock: no renewal succeeded before its validity ran out/)
  t.notOk(processAlive(pid), 'CMD was terminated')
})

t.test('lock lost: a CMD that ignores SIGTERM gets SIGKILL after --grace', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(
    ['run', 'lost:stubborn', '--ttl', '1s', '--grace', '300ms', ...sh(`trap "" TERM; echo $$ > ${dir}/pid; while :; do sleep 0.1; done`)],
    opts,
  )
  const pid = Number(await until('CMD to start', () => fileText(`${dir}/pid`)))
  await wipe('lock', 'lost:stubborn')
  const done = await run.done
  t.equal(done.code, 70)
  t.match(done.stderr, /SIGKILL after 300 ms/)
  t.notOk(processAlive(pid), 'CMD was killed')
})

t.test('signals to lockctl are forwarded to CMD, then the lock is released', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(
    [
      'run',
      'sig:term',
      '--ttl',
      '10s',
      ...sh(`trap "echo TERM > ${dir}/marker; exit 0" TERM; echo ready > ${dir}/ready; while :; do sleep 0.05; done`),
    ],
    opts,
  )
  await until('CMD to start', () => fileText(`${dir}/ready`))
  t.equal((await get('/locks/sig:term')).status, 200)
  run.child.kill('SIGTERM')
  const done = await run.done
  t.equal(fileText(`${dir}/marker`), 'TERM\n', 'CMD got SIGTERM (its trap wrote the marker)')
  t.equal(done.code, 0, "and lockctl exits with CMD's code")
  t.equal((await get('/locks/sig:term')).status, 404, 'released')

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const) {
    const key = `sig:${signal}`
    const r = spawnLockctl(['run', key, ...sh(`echo ready > ${dir}/${signal}; exec sleep 30`)], opts)
    await until('CMD to start', () => fileText(`${dir}/${signal}`))
    r.child.kill(signal)
    const d = await r.done
    t.equal(d.code, code, `${signal}: CMD died by it, lockctl exits ${code}`)
    t.equal((await get(`/locks/${key}`)).status, 404, `${signal}: released`)
  }
})

t.test('a signal while waiting in line: gives up at once, CMD never runs, no grant is left behind', async (t) => {
  const dir = t.testdir()
  const holder = await post('/locks/sig:wait?ttl=20s')
  const run = spawnLockctl(['run', 'sig:wait', '--wait', '20s', '--', 'touch', `${dir}/ran`], opts)
  await until('lockctl to wait in line', async () => (await get('/locks/sig:wait')).body.waiters === 1)
  run.child.kill('SIGTERM')
  const done = await run.done
  t.equal(done.code, 128 + 15, 'exit 143')
  t.match(done.stderr, /interrupted by SIGTERM while acquiring/)
  t.notOk(existsSync(`${dir}/ran`), 'CMD never ran')
  await until('the waiter to leave the line', async () => (await get('/locks/sig:wait')).body.waiters === 0)
  t.equal((await get('/locks/sig:wait')).body.fence, holder.body.fence, 'the holder still holds it')
  await del('/locks/sig:wait', holder.body.token as string)
  t.equal((await get('/locks/sig:wait')).status, 404, 'free once the holder released: nothing was granted to the quitter')
})

t.test('run: CMD not found exits 127 and releases; the service unreachable exits 69', async (t) => {
  const missing = await lockctl(['run', 'run:missing', '--', 'no-such-command-here'], opts)
  t.equal(missing.code, 127)
  t.match(missing.stderr, /command not found/)
  t.equal((await get('/locks/run:missing')).status, 404, 'released')

  const closed = { url: `http://127.0.0.1:${await freePort()}` }
  const dir = t.testdir()
  const commands = [
    ['run', 'k', '--', 'touch', `${dir}/ran`],
    ['acquire', 'k'],
    ['release', 'k', '--token', 'some-owner-token-0000'],
    ['list'],
  ]
  const results = await Promise.all(commands.map((args) => lockctl(args, closed)))
  results.forEach((r, i) => {
    t.equal(r.code, 69, `${commands[i]![0]}: 69 when unreachable`)
    t.match(r.stderr, /cannot reach the lock service at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/)
  })
  t.notOk(existsSync(`${dir}/ran`), 'CMD never ran')
})

t.test('503 backend_unavailable at acquire exits 69', async (t) => {
  const r2 = await startRedis({ t })
  const { app: app2 } = await startApp(t, [r2.url], { logLevel: 'silent' })
  const url2 = await app2.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await lockctl(['run', 'down', '--', 'true'], { url: url2 })).code, 0, 'fine while Redis is up')
  await r2.kill()
  const dir = t.testdir()
  const run = await lockctl(['run', 'down', '--', 'touch', `${dir}/ran`], { url: url2 })
  t.equal(run.code, 69)
  t.match(run.stderr, /backend_unavailable/)
  t.notOk(existsSync(`${dir}/ran`))
  t.equal((await lockctl(['acquire', 'down'], { url: url2 })).code, 69)
})

t.test('acquire, renew, release, status: output and exit codes', async (t) => {
  const acquired = await lockctl(['acquire', 'cmd:x', '--ttl', '5s'], opts)
  t.equal(acquired.code, 0)
  const grant = JSON.parse(acquired.stdout) as Record<string, unknown>
  t.match(grant, { key: 'cmd:x', mode: 'exclusive', ttlMs: 5000, holdCount: 1 }, 'the grant JSON, on one line')
  t.equal(acquired.stdout.trim().split('\n').length, 1)
  const token = grant.token as string
  const other = 'another-owner-token-0000'

  const [status, held, again, notOwner, notOwnerRelease] = await Promise.all([
    lockctl(['status', 'cmd:x'], opts),
    lockctl(['acquire', 'cmd:x', '--token', other], opts),
    lockctl(['acquire', 'cmd:x', '--token', token, '--ttl', '6s'], opts),
    lockctl(['renew', 'cmd:x', '--token', other], opts),
    lockctl(['release', 'cmd:x', '--token', other], opts),
  ])
  t.equal(status.code, 0)
  t.match(JSON.parse(status.stdout), { key: 'cmd:x', mode: 'exclusive', fence: grant.fence, holdCount: 1, waiters: 0 })
  t.notOk(status.stdout.includes(token), 'status never shows the token')
  t.equal(held.code, 75, 'held: 75')
  t.equal(again.code, 0, 'the holder re-acquiring with its token: 0')
  t.equal(JSON.parse(again.stdout).fence, grant.fence, 'same hold')
  t.equal(notOwner.code, 1, 'renew with another token: 1')
  t.match(notOwner.stderr, /not_owner/)
  t.equal(notOwnerRelease.code, 1, 'release with another token: 1')

  const renewed = await lockctl(['renew', 'cmd:x', '--token', token, '--ttl', '10s'], opts)
  t.equal(renewed.code, 0)
  t.match(JSON.parse(renewed.stdout), { key: 'cmd:x', ttlMs: 10000, fence: grant.fence })

  const released = await lockctl(['release', 'cmd:x', '--token', token], opts)
  t.equal(released.code, 0)
  t.same(JSON.parse(released.stdout), { key: 'cmd:x', released: true, holdCount: 0 })
  const [twice, renewGone, free] = await Promise.all([
    lockctl(['release', 'cmd:x', '--token', token], opts),
    lockctl(['renew', 'cmd:x', '--token', token], opts),
    lockctl(['status', 'cmd:x'], opts),
  ])
  t.equal(twice.code, 1, 'released already: 1')
  t.match(twice.stderr, /lock_not_found/)
  t.equal(renewGone.code, 1, 'renew of a released lock: 1')
  t.equal(free.code, 1, 'status of a free lock: 1')
  t.match(free.stderr, /not held/)

  const mine = 'my-own-chosen-token-0001'
  const chosen = await lockctl(['acquire', 'cmd:y', '--token', mine, '--wait', '1s'], opts)
  t.equal(JSON.parse(chosen.stdout).token, mine, '--token chooses the token')
  t.equal(
    (await lockctl(['release', 'cmd:y', '--token', mine, '--url', url], { url: 'http://127.0.0.1:1' })).code,
    0,
    '--url overrides LOCK_SERVICE_URL',
  )
})

t.test('read-write holds from the command line', async (t) => {
  const [r1, r2] = await Promise.all([lockctl(['acquire', 'cmd:rw', '--read'], opts), lockctl(['acquire', 'cmd:rw', '--read'], opts)])
  t.same([r1.code, r2.code], [0, 0], 'two readers')
  t.equal(JSON.parse(r1.stdout).mode, 'read')
  const token1 = JSON.parse(r1.stdout).token as string
  const token2 = JSON.parse(r2.stdout).token as string
  const [writer, state, exclusive, renewRead, renewWrite] = await Promise.all([
    lockctl(['acquire', 'cmd:rw', '--write'], opts),
    lockctl(['status', 'cmd:rw', '--rw'], opts),
    lockctl(['status', 'cmd:rw'], opts),
    lockctl(['renew', 'cmd:rw', '--read', '--token', token1], opts),
    lockctl(['renew', 'cmd:rw', '--write', '--token', token1], opts),
  ])
  t.equal(writer.code, 75, 'a writer: 75')
  t.match(JSON.parse(state.stdout), { key: 'cmd:rw', writer: null, readers: 2 })
  t.equal(exclusive.code, 1, 'the exclusive lock of that name is free')
  t.equal(renewRead.code, 0)
  t.equal(renewWrite.code, 1, 'not a write hold')
  const releases = await Promise.all([token1, token2].map((tk) => lockctl(['release', 'cmd:rw', '--read', '--token', tk], opts)))
  t.same(
    releases.map((r) => r.code),
    [0, 0],
  )
  const w = await lockctl(['acquire', 'cmd:rw', '--write', '--ttl', '5s'], opts)
  t.equal(w.code, 0)
  t.match(JSON.parse((await lockctl(['status', 'cmd:rw', '--rw'], opts)).stdout), {
    writer: { fence: JSON.parse(w.stdout).fence },
    readers: 0,
  })
  t.equal((await lockctl(['release', 'cmd:rw', '--write', '--token', JSON.parse(w.stdout).token], opts)).code, 0)
})

t.test('semaphores: parsing --limit, --permits and --semaphore', async (t) => {
  t.match(parse(['run', 'k', '--limit', '4', '--permits', '2', '--', 'true'], {}), {
    command: 'run',
    mode: 'permit',
    semaphore: true,
    permits: { limit: 4, permits: 2 },
    limit: undefined,
  })
  t.match(parse(['acquire', 'k', '--limit', '3'], {}), { mode: 'permit', permits: { limit: 3, permits: 1 } }, '--permits defaults to 1')
  t.match(parse(['renew', 'k', '--semaphore', '--token', 'a-semaphore-token-0001'], {}), { mode: 'permit', permits: undefined })
  t.match(parse(['release', 'k', '--semaphore', '--token', 'a-semaphore-token-0001'], {}), { mode: 'permit' })
  t.match(parse(['status', 'k', '--semaphore'], {}), { mode: 'exclusive', semaphore: true, rw: false })
  t.match(
    parse(['list', '--semaphore', '--limit', '5'], {}),
    { semaphore: true, limit: 5, permits: undefined },
    "list's --limit still counts lines",
  )
  t.match(parse(['acquire', 'k'], {}), { mode: 'exclusive', semaphore: false, permits: undefined }, 'without --limit: a lock')
  const usage: string[][] = [
    ['run', 'k', '--permits', '2', '--', 'true'],
    ['acquire', 'k', '--limit', '0'],
    ['acquire', 'k', '--limit', 'four'],
    ['acquire', 'k', '--limit', '2', '--permits', '3'],
    ['acquire', 'k', '--limit', '2', '--read'],
    ['run', 'k', '--limit', '2', '--write', '--', 'true'],
    ['renew', 'k', '--semaphore', '--read', '--token', 'a-semaphore-token-0001'],
    ['renew', 'k', '--limit', '2', '--token', 'a-semaphore-token-0001'],
    ['status', 'k', '--rw', '--semaphore'],
    ['status', 'k', '--limit', '2'],
  ]
  for (const args of usage) t.throws(() => parse(args, {}), UsageError, `lockctl ${args.join(' ')}: usage error`)
  const help = await lockctl(['help', 'run'])
  t.match(help.stdout, /--limit <n>/)
  t.match(help.stdout, /--permits <k>/)
  t.match((await lockctl(['--help'])).stdout, /78 .*limit_mismatch/s, '--help documents exit 78')
})

t.test('semaphores: run KEY --limit N holds one of N permits while CMD runs; the next one past the limit waits or exits 75', async (t) => {
  const dir = t.testdir()
  // Each CMD logs when it starts and ends (one clock for all: date), the history checker's holds.
  const log = path.join(dir, 'log')
  const logged = (what: 'start' | 'end') => `echo "${what} $LOCK_FENCE $LOCK_PERMITS $(date +%s%N)" >> ${log}`
  // Two 1-permit runs and one 2-permit run on a semaphore of limit 4: all three hold at once.
  const runs = (
    [
      ['a', 1],
      ['b', 1],
      ['c', 2],
    ] as const
  ).map(([name, permits]) => {
    const run = spawnLockctl(
      [
        'run',
        'sem:jobs',
        '--limit',
        '4',
        '--permits',
        String(permits),
        '--ttl',
        '10s',
        ...sh(`echo "$LOCK_FENCE $LOCK_PERMITS" > ${dir}/${name}; ${logged('start')}; ${gate(dir, name)}; ${logged('end')}`),
      ],
      opts,
    )
    return { name, permits, run }
  })
  for (const { name } of runs) await started(dir, name)
  const state = await get('/semaphores/sem:jobs')
  t.same(
    state.body,
    { key: 'sem:jobs', limit: 4, permitsInUse: 4, holders: 3, waiters: 0 },
    'three holds, four permits, while the commands run',
  )
  const seen = runs.map(({ name }) => (fileText(`${dir}/${name}`) ?? '').trim().split(' '))
  t.same(
    seen.map(([, permits]) => permits),
    ['1', '1', '2'],
    'CMD gets LOCK_PERMITS',
  )
  t.equal(new Set(seen.map(([fence]) => fence)).size, 3, 'each hold has its own fence')

  const [full, mismatch, status] = await Promise.all([
    lockctl(['run', 'sem:jobs', '--limit', '4', '--', 'touch', `${dir}/ran`], opts),
    lockctl(['acquire', 'sem:jobs', '--limit', '5'], opts),
    lockctl(['status', 'sem:jobs', '--semaphore'], opts),
  ])
  t.equal(full.code, 75, 'no permit left: 75')
  t.match(full.stderr, /^lockctl: run sem:jobs \(semaphore\): held by someone else.*\(lock_held\)\n$/)
  t.notOk(existsSync(`${dir}/ran`), 'CMD never ran')
  t.equal(mismatch.code, 78, 'another limit while others hold: 78')
  t.match(mismatch.stderr, /limit 4.*\(limit_mismatch\)/)
  t.equal(status.code, 0)
  t.same(JSON.parse(status.stdout), state.body, 'status --semaphore: the same state, never a token')

  // A waiting run gets the permit b gives back.
  const waiting = spawnLockctl(
    ['run', 'sem:jobs', '--limit', '4', '--wait', '10s', ...sh(`${logged('start')}; echo $LOCK_FENCE; sleep 0.1; ${logged('end')}`)],
    opts,
  )
  await until('the waiting run to be in line', async () => (await get('/semaphores/sem:jobs')).body.waiters === 1)
  open(dir, 'b')
  const next = await waiting.done
  t.equal(next.code, 0, 'granted once b released')
  for (const { name } of runs.filter((r) => r.name !== 'b')) open(dir, name)
  const done = await Promise.all(runs.map((r) => r.run.done))
  t.same(
    done.map((d) => d.code),
    [0, 0, 0],
  )
  const history = new History()
  const lines = readFileSync(log, 'utf8').trim().split('\n')
  const base = BigInt(lines[0]!.split(' ')[3]!)
  const starts = new Map<string, number>()
  for (const line of lines) {
    const [what, fence, permits, at] = line.split(' ') as [string, string, string, string]
    const ms = Number(BigInt(at) - base) / 1e6
    if (what === 'start') starts.set(fence, ms)
    else {
      t.ok(starts.has(fence), `fence ${fence}: its CMD ended after it started`)
      const hold = { key: 'sem:jobs', namespace: 'semaphores', mode: 'permit' as const, permits: Number(permits), limit: 4 }
      history.record({ ...hold, client: `fence ${fence}`, fence: Number(fence), start: starts.get(fence) ?? ms, end: ms })
    }
  }
  t.equal(history.size, 4, 'the three runs and the waiting one recorded, each while its CMD ran')
  history.assertSafe(t, 'lockctl runs on one semaphore')
  t.ok(Number(next.stdout) > Math.max(...seen.map(([fence]) => Number(fence))), 'the later hold has a higher fence')
  t.equal((await get('/semaphores/sem:jobs')).status, 404, 'all released')
  t.equal((await lockctl(['status', 'sem:jobs', '--semaphore'], opts)).code, 1, 'status of a free semaphore: 1')
})

t.test('semaphores: acquire, renew, release, list from the command line', async (t) => {
  const acquired = await lockctl(['acquire', 'sem:cmd', '--limit', '3', '--permits', '2', '--ttl', '5s'], opts)
  t.equal(acquired.code, 0)
  const grant = JSON.parse(acquired.stdout) as Record<string, unknown>
  t.match(grant, { key: 'sem:cmd', mode: 'permit', permits: 2, limit: 3, ttlMs: 5000, holdCount: 1 })
  const token = grant.token as string
  const [other, otherPermits, renewed, exclusive, notOwner] = await Promise.all([
    lockctl(['acquire', 'sem:cmd', '--limit', '3'], opts),
    lockctl(['acquire', 'sem:cmd', '--limit', '3', '--permits', '1', '--token', token], opts),
    lockctl(['renew', 'sem:cmd', '--semaphore', '--token', token, '--ttl', '10s'], opts),
    lockctl(['renew', 'sem:cmd', '--token', token], opts),
    lockctl(['release', 'sem:cmd', '--semaphore', '--token', 'another-owner-token-0000'], opts),
  ])
  t.equal(other.code, 0, 'another hold of the one permit left')
  t.equal(otherPermits.code, 78, 'the holder asking for other permits: 78 (permits_mismatch)')
  t.match(otherPermits.stderr, /permits_mismatch/)
  t.equal(renewed.code, 0)
  t.match(JSON.parse(renewed.stdout), { mode: 'permit', ttlMs: 10000, fence: grant.fence, permits: 2, limit: 3 })
  t.equal(exclusive.code, 1, 'without --semaphore: the lock sem:cmd, which nobody holds')
  t.equal(notOwner.code, 1, 'release with a token that holds nothing: 1')

  const listed = await lockctl(['list', '--semaphore', '--prefix', 'sem:cmd'], opts)
  t.equal(listed.code, 0)
  const otherGrant = JSON.parse(other.stdout) as Record<string, unknown>
  t.match(
    listed.stdout,
    new RegExp(
      `^sem:cmd semaphore limit=3 permitsInUse=3 holders=2 waiters=0 holds=${String(grant.fence)}:2:\\d+,${String(otherGrant.fence)}:1:\\d+\n$`,
    ),
    'one line, each hold as FENCE:PERMITS:REMAININGMS',
  )
  const json = await lockctl(['list', '--semaphore', '--prefix', 'sem:cmd', '--json'], opts)
  t.match(JSON.parse(json.stdout), { key: 'sem:cmd', limit: 3, permitsInUse: 3, holders: 2 })
  for (const out of [listed.stdout, json.stdout]) t.notOk(out.includes(token), 'never a token')

  const released = await lockctl(['release', 'sem:cmd', '--semaphore', '--token', token], opts)
  t.same([released.code, JSON.parse(released.stdout)], [0, { key: 'sem:cmd', released: true, holdCount: 0 }])
  t.equal((await lockctl(['release', 'sem:cmd', '--semaphore', '--token', token], opts)).code, 1, 'released already: 1')
  t.equal((await lockctl(['release', 'sem:cmd', '--semaphore', '--token', otherGrant.token as string], opts)).code, 0)
})

t.test('list follows the cursors: one line per held lock, --limit, --json, --rw', async (t) => {
  for (let i = 0; i < 230; i++) {
    const res = await app.inject({ method: 'POST', url: `/locks/ls:job-${String(i).padStart(3, '0')}?ttl=60s` })
    t.equal(res.statusCode, 201)
  }
  await app.inject({ method: 'POST', url: '/locks/lsother:job?ttl=60s' })
  const all = await lockctl(['list', '--prefix', 'ls:'], opts)
  t.equal(all.code, 0)
  const lines = all.stdout.trim().split('\n')
  t.equal(lines.length, 230, 'all 230, over several pages of 100')
  t.equal(new Set(lines.map((l) => l.split(' ')[0])).size, 230, 'each once')
  t.ok(
    lines.every((l) => /^ls:job-\d{3} exclusive fence=\d+ remainingMs=\d+ holdCount=1 waiters=0$/.test(l)),
    'key mode fence remainingMs holdCount waiters',
  )

  const some = await lockctl(['list', '--prefix', 'ls:', '--limit', '7'], opts)
  t.equal(some.stdout.trim().split('\n').length, 7, '--limit 7')
  const json = await lockctl(['list', '--prefix', 'ls:job-00', '--json'], opts)
  const items = json.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { key: string })
  t.same(
    items.map((i) => i.key).sort(),
    Array.from({ length: 10 }, (_, i) => `ls:job-00${i}`),
    '--json: one JSON object per line',
  )
  t.equal((await lockctl(['list', '--prefix', 'nothing-held:'], opts)).stdout, '', 'nothing held: no lines')

  await app.inject({ method: 'POST', url: '/rwlocks/lsrw:a/read?ttl=60s' })
  await app.inject({ method: 'POST', url: '/rwlocks/lsrw:a/read?ttl=60s' })
  await app.inject({ method: 'POST', url: '/rwlocks/lsrw:b/write?ttl=60s' })
  const rw = await lockctl(['list', '--rw', '--prefix', 'lsrw:'], opts)
  t.equal(rw.code, 0)
  t.same(rw.stdout.trim().split('\n').sort(), [
    expect(
      rw.stdout,
      /^lsrw:a read writerFence=- writerRemainingMs=- readers=2 writerWaiting=false waiters=0 readerHolds=\d+:\d+,\d+:\d+$/m,
    ),
    expect(rw.stdout, /^lsrw:b write writerFence=\d+ writerRemainingMs=\d+ readers=0 writerWaiting=false waiters=0 readerHolds=-$/m),
  ])
  // Each reader's fence, as shown, is enough to force-release that read hold.
  const fences = /readerHolds=(\d+):\d+,(\d+):\d+/.exec(rw.stdout)?.slice(1) ?? []
  t.equal((await app.inject({ method: 'DELETE', url: `/rwlocks/lsrw:a/read?force=true&fence=${fences[0]}` })).statusCode, 200)
  const after = await lockctl(['list', '--rw', '--prefix', 'lsrw:a'], opts)
  t.match(
    after.stdout,
    new RegExp(`readers=1 writerWaiting=false waiters=0 readerHolds=${fences[1]}:\\d+$`, 'm'),
    'the other read hold is left',
  )
})

/** The line of `text` matching `re` (or a marker that makes the comparison fail). */
function expect(text: string, re: RegExp): string {
  return re.exec(text)?.[0] ?? `(no line matching ${re})`
}

t.test('API keys: --key / LOCK_SERVICE_KEY sent as a Bearer token, 401/403 exit 77, the secret never printed', async (t) => {
  const keys = [
    { name: 'billing', secret: 'sk_billing_cli_0123456789abcdef', prefixes: ['billing:'] },
    { name: 'ops', secret: 'sk_ops_cli_admin_0123456789abcdef', prefixes: [], admin: true },
  ]
  const [billing, ops] = keys as [(typeof keys)[0], (typeof keys)[0]]
  const r3 = await startRedis({ t })
  const config = loadConfig({ REDIS_URLS: r3.url, AUTH_FILE: writeAuthFile(keys), LOG_LEVEL: 'silent' })
  const authed = await buildApp(config)
  t.teardown(() => authed.close())
  const url3 = await authed.listen({ port: 0, host: '127.0.0.1' })
  const outputs: string[] = []
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const r = await lockctl(args, { url: url3, env })
    outputs.push(r.stdout, r.stderr)
    return r
  }

  const env = { LOCK_SERVICE_KEY: billing.secret }
  const [none, wrong, inside, withFlag, outside, notAdmin, acquired] = await Promise.all([
    run(['acquire', 'billing:a']),
    run(['acquire', 'billing:a'], { LOCK_SERVICE_KEY: 'sk_wrong_0123456789abcdef' }),
    run(['run', 'billing:job', ...sh('echo $LOCK_FENCE')], env),
    run(['run', 'billing:job2', '--key', billing.secret, '--', 'true']),
    run(['run', 'reports:job', '--', 'true'], env),
    run(['list'], env),
    run(['acquire', 'billing:b', '--ttl', '30s'], env),
  ])
  t.equal(none.code, 77, 'no key: 77')
  t.match(none.stderr, /unauthorized/)
  t.equal(wrong.code, 77, 'wrong key: 77')
  t.equal(inside.code, 0, 'LOCK_SERVICE_KEY: run works inside the prefix')
  t.equal(withFlag.code, 0, '--key works too')
  t.equal(outside.code, 77, 'outside its prefixes: 77')
  t.match(outside.stderr, /forbidden/)
  t.equal(notAdmin.code, 77, 'list needs an admin key')
  t.equal(acquired.code, 0)
  const [listed, status] = await Promise.all([run(['list', '--key', ops.secret]), run(['status', 'billing:b', '--key', ops.secret])])
  t.equal(listed.code, 0, 'an admin key lists')
  t.match(listed.stdout, /^billing:b exclusive fence=/m)
  t.equal(status.code, 0)
  const released = await run(['release', 'billing:b', '--token', JSON.parse(acquired.stdout).token], env)
  t.equal(released.code, 0, `release: ${released.stderr}`)
  for (const secret of [billing.secret, ops.secret]) t.notOk(outputs.join('\n').includes(secret), 'the secret never appears in any output')
})

t.test('two (three) concurrent `lockctl run` on one key never overlap; fences increase (history-checked)', async (t) => {
  const dir = t.testdir()
  const log = path.join(dir, 'history')
  const script =
    'echo "start $CLIENT $LOCK_FENCE $(date +%s%N)" >> "$LOG"; sleep $HOLD; echo "end $CLIENT $LOCK_FENCE $(date +%s%N)" >> "$LOG"'
  // The first client renews during each of its holds (renewals every third of the validity).
  const clients = [
    { ttl: '1s', hold: '0.5' },
    { ttl: '2s', hold: '0.1' },
    { ttl: '10s', hold: '0.1' },
  ]
  const rounds = 4
  const codes: (number | null)[] = []
  await Promise.all(
    clients.map(async ({ ttl, hold }, i) => {
      for (let round = 0; round < rounds; round++) {
        const r = await lockctl(['run', 'race:one', '--ttl', ttl, '--wait', '20s', ...sh(script)], {
          url,
          env: { CLIENT: `c${i}`, LOG: log, HOLD: hold },
        })
        codes.push(r.code)
        if (r.code !== 0) t.comment(`c${i} round ${round}: exit ${r.code}: ${r.stderr}`)
      }
    }),
  )
  t.same(codes, Array(clients.length * rounds).fill(0), 'every run got the lock and exited 0')

  const starts = new Map<string, bigint>()
  const history = new History()
  const lines = readFileSync(log, 'utf8').trim().split('\n')
  const base = BigInt(lines[0]!.split(' ')[3]!)
  const ms = (ns: bigint) => Number(ns - base) / 1e6
  for (const line of lines) {
    const [what, client, fence, at] = line.split(' ') as [string, string, string, string]
    const id = `${client} ${fence}`
    if (what === 'start') starts.set(id, BigInt(at))
    else {
      const start = starts.get(id)
      t.ok(start !== undefined, `${id}: end after a start`)
      history.record({ key: 'race:one', mode: 'exclusive', client, fence: Number(fence), start: ms(start ?? 0n), end: ms(BigInt(at)) })
      starts.delete(id)
    }
  }
  t.equal(history.size, clients.length * rounds, 'every hold recorded')
  history.assertSafe(t, 'concurrent lockctl run')
})
