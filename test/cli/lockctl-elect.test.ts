import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { parse } from '../../src/cli/args.js'
import { UsageError } from '../../src/cli/exit.js'
import { startRedis } from '../../harness/redis-server.js'
import { startProxy as startTcpProxy } from '../../harness/tcp-proxy.js'
import { fileText, lockctl, processAlive, spawnLockctl, until } from '../helpers/lockctl.js'

// lockctl elect / leader / observe against the real service (issue #29).
const redis = await startRedis({ t })
const { address: url } = await startListening(t, [redis.url], { logLevel: 'warn' })
const opts = { url }
const sh = (script: string) => ['--', 'sh', '-c', script]
/** A CMD script that marks `name` started (its pid, token, and name, term, candidate), then runs until the test creates `name`.go. */
const gate = (dir: string, name: string) =>
  `echo $$ > ${dir}/${name}.pid; echo "$LOCK_TOKEN" > ${dir}/${name}.token; echo "$LOCK_NAME $LOCK_TERM $LOCK_CANDIDATE" > ${dir}/${name}.started; ` +
  `while [ ! -e ${dir}/${name}.go ]; do sleep 0.02; done`
const started = (dir: string, name: string) => until(`${name} to start`, () => fileText(`${dir}/${name}.started`))
const open = (dir: string, name: string) => writeFileSync(`${dir}/${name}.go`, '')
const state = (name: string) => request(url, 'GET', `/elections/${name}`)

t.test('usage: elect needs --candidate and a command after --; leader and observe take none', async (t) => {
  for (const args of [
    ['elect', 'e'],
    ['elect', 'e', '--', 'true'],
    ['elect', 'e', '--candidate', 'a'],
    ['elect', 'e', '--candidate', 'a', 'echo', 'hi'],
    ['elect', 'bad name!', '--candidate', 'a', '--', 'true'],
    ['elect', 'e', '--candidate', 'a', '--value', 'x'.repeat(4097), '--', 'true'],
    ['leader'],
    ['leader', 'e', '--', 'true'],
    ['observe', 'e', 'extra'],
  ]) {
    t.throws(() => parse(args, {}), UsageError, `lockctl ${args.join(' ').slice(0, 60)}: usage error`)
  }
  t.match(parse(['elect', 'e', '--candidate', 'a', '--requeue', '--wait', '5s', '--', 'true'], {}), {
    command: 'elect',
    lockKey: 'e',
    candidate: 'a',
    requeue: true,
    waitMs: 5000,
    cmd: ['true'],
  })
  const help = await lockctl(['--help'])
  for (const word of ['elect', 'leader', 'observe', '--requeue', 'leader: 1 when there is no leader'])
    t.ok(help.stdout.includes(word), `--help mentions ${word}`)
})

t.test('elect runs CMD as leader with LOCK_NAME and LOCK_TERM, leader shows it, and it resigns when CMD exits', async (t) => {
  const dir = t.testdir()
  const run = spawnLockctl(
    ['elect', 'el:basic', '--candidate', 'node-a', '--value', 'http://a:80', ...sh(`${gate(dir, 'cmd')}; exit 3`)],
    opts,
  )
  const [name, term, candidate] = (await started(dir, 'cmd')).trim().split(' ')
  t.equal(name, 'el:basic')
  t.equal(candidate, 'node-a')
  const inspected = await state('el:basic')
  t.equal(inspected.status, 200)
  t.match(inspected.body.leader, { candidate: 'node-a', value: 'http://a:80', term: Number(term) }, 'LOCK_TERM is the term')

  const shown = await lockctl(['leader', 'el:basic'], opts)
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, new RegExp(`^node-a term=${term} since=\\S+ remainingMs=\\d+ value=http://a:80\\n$`))
  const json = await lockctl(['leader', 'el:basic', '--json'], opts)
  t.match(JSON.parse(json.stdout), { candidate: 'node-a', term: Number(term), value: 'http://a:80' })
  t.notOk(json.stdout.includes('token'), 'never a token')

  open(dir, 'cmd')
  const done = await run.done
  t.equal(done.code, 3, `CMD's own exit code: ${done.stderr}`)
  const after = await lockctl(['leader', 'el:basic'], opts)
  t.equal(after.code, 1, 'no leader once CMD exited: it resigned')
  t.match(after.stderr, /no leader/)
})

t.test('CMD runs only while leader: a second candidate waits, and its term is higher', async (t) => {
  const dir = t.testdir()
  const first = spawnLockctl(['elect', 'el:line', '--candidate', 'a', ...sh(gate(dir, 'a'))], opts)
  const termA = Number((await started(dir, 'a')).split(' ')[1])
  const second = spawnLockctl(['elect', 'el:line', '--candidate', 'b', '--wait', '10s', ...sh(gate(dir, 'b'))], opts)
  await sleep(500)
  t.notOk(existsSync(`${dir}/b.started`), 'b does not run while a leads')
  const refused = await lockctl(['elect', 'el:line', '--candidate', 'c', ...sh('echo ran')], opts)
  t.equal(refused.code, 75, 'without --wait: not elected, exit 75')
  t.match(refused.stderr, /led by a \(term \d+\)/, 'says who leads')
  t.equal(refused.stdout, '', 'CMD never ran')

  open(dir, 'a')
  t.equal((await first.done).code, 0)
  const termB = Number((await started(dir, 'b')).split(' ')[1])
  t.ok(termB > termA, `b's term ${termB} is above a's ${termA}`)
  open(dir, 'b')
  t.equal((await second.done).code, 0)
})

t.test('leadership lost (force-release): CMD is stopped within a bound and elect exits 70', async (t) => {
  const dir = t.testdir()
  // CMD ignores SIGTERM: the grace, then SIGKILL, must still stop it.
  const run = spawnLockctl(
    ['elect', 'el:forced', '--candidate', 'a', '--ttl', '30s', '--grace', '500ms', ...sh(`trap '' TERM; ${gate(dir, 'cmd')}`)],
    opts,
  )
  await started(dir, 'cmd')
  const pid = Number(readFileSync(`${dir}/cmd.pid`, 'utf8'))
  await sleep(300) // the watch is parked
  const forcedAt = performance.now()
  t.equal((await request(url, 'DELETE', '/elections/el:forced?force=true')).status, 200)
  const done = await run.done
  const stoppedAfter = performance.now() - forcedAt
  t.equal(done.code, 70, 'exit 70: leadership lost')
  t.match(done.stderr, /lost the lock: the service says it was force_released/)
  t.notOk(processAlive(pid), 'CMD is gone')
  t.ok(stoppedAfter < 3000, `stopped ${Math.round(stoppedAfter)} ms after the force-release (grace 500 ms; the next renewal was 10 s away)`)
})

t.test('--requeue campaigns again after leadership is lost and after CMD ends; a signal ends it', async (t) => {
  const dir = t.testdir()
  // Each term runs a CMD that records its term, then waits for its own gate file.
  const script =
    `n=$(ls ${dir} | grep -c '^t[0-9]*\\.started$'); echo "$LOCK_NAME $LOCK_TERM" > ${dir}/t$n.started; ` +
    `while [ ! -e ${dir}/t$n.go ]; do sleep 0.02; done`
  const run = spawnLockctl(['elect', 'el:requeue', '--candidate', 'a', '--requeue', '--wait', '5s', '--grace', '300ms', ...sh(script)], {
    ...opts,
    killAfterMs: 40_000,
  })
  const term0 = Number((await started(dir, 't0')).split(' ')[1])
  await sleep(300)
  t.equal((await request(url, 'DELETE', '/elections/el:requeue?force=true')).status, 200)
  const term1 = Number((await started(dir, 't1')).split(' ')[1])
  t.ok(term1 > term0, `campaigned again after the force-release: term ${term1} after ${term0}`)
  open(dir, 't1') // CMD ends by itself
  const term2 = Number((await started(dir, 't2')).split(' ')[1])
  t.ok(term2 > term1, `campaigned again after CMD exited: term ${term2}`)
  run.child.kill('SIGTERM')
  const done = await run.done
  t.equal(done.code, 143, 'the signal went to CMD (it died by it) and ended the loop')
  t.match(done.stderr, /term \d+ is over \(leadership was lost\); campaigning again/)
  t.equal((await state('el:requeue')).status, 404, 'resigned at the end: no leader, nobody in line')
})

t.test('observe prints each change as a line, and --json as JSON', async (t) => {
  const dir = t.testdir()
  const observer = spawnLockctl(['observe', 'el:watched'], opts)
  const json = spawnLockctl(['observe', 'el:watched', '--json'], opts)
  await until('the first lines', () => observer.stdout().includes('\n') && json.stdout().includes('\n'))
  t.equal(observer.stdout(), 'vacant term=0\n', 'the current state first: nobody ever led')

  const run = spawnLockctl(['elect', 'el:watched', '--candidate', 'a', '--value', 'v1', ...sh(gate(dir, 'cmd'))], opts)
  const term = Number((await started(dir, 'cmd')).split(' ')[1])
  await until('elected', () => observer.stdout().includes('elected'))
  const token = readFileSync(`${dir}/cmd.token`, 'utf8').trim()
  t.equal((await request(url, 'PUT', '/elections/el:watched/proclaim', { body: { token, value: 'v2' } })).status, 200)
  await until('proclaimed', () => observer.stdout().includes('proclaimed'))
  open(dir, 'cmd')
  t.equal((await run.done).code, 0)
  await until('vacant again', () => observer.stdout().split('\n').length >= 5)
  observer.child.kill('SIGINT')
  json.child.kill('SIGTERM')
  const [o, j] = await Promise.all([observer.done, json.done])
  t.equal(o.code, 0, 'a signal ends observe with 0')
  t.equal(j.code, 0)
  t.equal(
    o.stdout,
    `vacant term=0\nelected term=${term} candidate=a value=v1\nproclaimed term=${term} value=v2\nvacant term=${term} reason=resigned\n`,
  )
  const events = j.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
  t.match(events, [
    { event: 'vacant', term: 0 },
    { event: 'elected', term, candidate: 'a', value: 'v1' },
    { event: 'proclaimed', term, value: 'v2' },
    { event: 'vacant', term, reason: 'resigned' },
  ])
})

t.test('observe behind a round-robin load balancer, one instance cut off from Redis: retries, terms never go back', async (t) => {
  // A second instance whose Redis connection goes through a proxy (to cut it off), and a front that
  // sends each request to the next instance in turn.
  const port = Number(new URL(redis.url).port)
  const proxy = await startTcpProxy({ port }, { t })
  const lagging = await startListening(t, [proxy.url], { logLevel: 'error', nodeTimeoutMs: 200 })
  const targets = [new URL(url), new URL(lagging.address)]
  let turn = 0
  const front = http.createServer((req, res) => {
    const target = targets[turn++ % targets.length]!
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve))
  t.teardown(() => front.close())
  const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`
  const observer = spawnLockctl(['observe', 'el:balanced'], { url: frontUrl, killAfterMs: 60_000 })

  const first = await request(url, 'POST', '/elections/el:balanced/campaign', { body: { candidate: 'first', ttlMs: 5000 } })
  await until('the first term seen', () => observer.stdout().includes(`elected term=${first.body.term}`))
  await request(url, 'DELETE', '/elections/el:balanced', { token: String(first.body.token) })
  await until('its end seen', () => observer.stdout().includes(`vacant term=${first.body.term}`))
  await sleep(300) // both instances follow the vacancy
  proxy.cut('silent') // the second instance hears nothing more, and cannot look
  const second = await request(url, 'POST', '/elections/el:balanced/campaign', { body: { candidate: 'second', ttlMs: 5000 } })
  await until('the second term seen', () => observer.stdout().includes(`elected term=${second.body.term}`))
  await sleep(1000) // polls alternate between the instances meanwhile
  proxy.heal()
  await request(url, 'DELETE', '/elections/el:balanced', { token: String(second.body.token) })
  await until('its end seen', () => observer.stdout().includes(`vacant term=${second.body.term}`), 15_000)
  observer.child.kill('SIGTERM')
  const done = await observer.done
  t.equal(done.code, 0, done.stderr)
  t.match(done.stderr, /observe el:balanced: 503 backend_unavailable .*; retrying\n.*observing again/, 'said once per outage')
  const printed = done.stdout.trim().split('\n')
  const terms = printed.map((l) => Number(/term=(\d+)/.exec(l)?.[1]))
  t.ok(
    terms.every((term, i) => i === 0 || term >= terms[i - 1]!),
    `terms never go back: ${JSON.stringify(printed)}`,
  )
  t.equal(printed.at(-2), `elected term=${second.body.term} candidate=second`)
  t.match(printed.at(-1), new RegExp(`^vacant term=${second.body.term}( reason=resigned)?$`), 'ends on the final state')
})
