/** lockctl check KEY FENCE: exit 0 while the fence is a live hold's, 1 when not; the answer as JSON on stdout. */
import t from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { lockctl } from '../helpers/lockctl.js'

const redis = await startRedis({ t })
const { app } = await startApp(t, [redis.url], { logLevel: 'warn' })
const url = await app.listen({ port: 0, host: '127.0.0.1' })

const grant = async (path: string, payload?: Record<string, unknown>) => {
  const res = await app.inject({ method: 'POST', url: path, ...(payload ? { payload } : {}) })
  t.equal(res.statusCode, 201, path)
  return res.json() as { fence: number; token: string }
}

t.test('exit 0 for the live hold, 1 for another fence or after release', async (t) => {
  const { fence, token } = await grant('/locks/cli:check?ttl=30s')
  const live = await lockctl(['check', 'cli:check', String(fence)], { url })
  t.equal(live.code, 0, live.stderr)
  t.same(JSON.parse(live.stdout), { current: true, fence, held: true })
  const older = await lockctl(['check', 'cli:check', String(fence - 1)], { url })
  t.equal(older.code, 1)
  t.same(JSON.parse(older.stdout), { current: false, fence, held: true })
  await app.inject({ method: 'DELETE', url: '/locks/cli:check', headers: { 'lock-token': token } })
  const gone = await lockctl(['check', 'cli:check', String(fence)], { url })
  t.equal(gone.code, 1)
  t.same(JSON.parse(gone.stdout), { current: false, fence: null, held: false })
})

t.test('--rw and --semaphore check those namespaces', async (t) => {
  const read = await grant('/rwlocks/cli:rw/read?ttl=30s')
  t.equal((await lockctl(['check', 'cli:rw', String(read.fence), '--rw'], { url })).code, 0)
  t.equal((await lockctl(['check', 'cli:rw', String(read.fence)], { url })).code, 1, 'not under /locks')
  const permit = await grant('/semaphores/cli:sem?limit=2&ttl=30s')
  t.equal((await lockctl(['check', 'cli:sem', String(permit.fence), '--semaphore'], { url })).code, 0)
})

t.test("--election checks the election's term", async (t) => {
  const { term, token } = (await grant('/elections/cli:leader/campaign', { candidate: 'node-1', ttlMs: 30_000 })) as unknown as {
    term: number
    token: string
  }
  const live = await lockctl(['check', 'cli:leader', String(term), '--election'], { url })
  t.equal(live.code, 0, live.stderr)
  t.same(JSON.parse(live.stdout), { current: true, fence: term, held: true })
  t.equal((await lockctl(['check', 'cli:leader', String(term)], { url })).code, 1, 'not under /locks')
  await app.inject({ method: 'DELETE', url: '/elections/cli:leader', headers: { 'lock-token': token } })
  const gone = await lockctl(['check', 'cli:leader', String(term), '--election'], { url })
  t.equal(gone.code, 1)
  t.same(JSON.parse(gone.stdout), { current: false, fence: null, held: false })
  t.equal((await lockctl(['check', 'cli:leader', String(term), '--election', '--rw'], { url })).code, 64, '--election with --rw')
})

t.test('a bad fence is a usage error (64) before any request; an unreachable service 69', async (t) => {
  for (const bad of ['0', '-1', '1.5', 'x', '9007199254740992']) {
    const res = await lockctl(['check', 'cli:check', bad], { url })
    t.equal(res.code, 64, `${bad}: ${res.stderr.trim()}`)
  }
  t.equal((await lockctl(['check', 'cli:check'], { url })).code, 64, 'FENCE missing')
  t.equal((await lockctl(['check', 'cli:check', '5'], { url: 'http://127.0.0.1:1' })).code, 69)
  const help = await lockctl(['--help'])
  t.match(help.stdout, /check \[options\] <KEY> <FENCE>/, '--help lists check')
  t.match(help.stdout, /check: the fence is not a live hold's/, 'and its exit 1')
})
