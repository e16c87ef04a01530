import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Config } from '../../src/config.js'
import {
  electionStateSchema,
  leadershipSchema,
  observedSchema,
  proclaimedSchema,
  renewedLeadershipSchema,
} from '../../src/http/schemas/elections.js'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startListening } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { openEventStream } from '../../harness/event-stream.js'

type Method = 'POST' | 'PUT' | 'DELETE' | 'GET'

/**
 * Leader election (issue #29) as docs/elections.md and openapi.yaml describe it, runnable against any
 * backend: one Redis, a quorum of N, a Redis Cluster, a Sentinel-managed primary (`overrides`). Two
 * replicas of the service share the backend: candidates use A, observers B. Every reply is checked
 * against the zod schema the OpenAPI document comes from.
 */
export async function electionSuite(t: Test, redisUrls: readonly string[], overrides: Partial<Config> = {}): Promise<void> {
  const a = await startListening(t, redisUrls, { logLevel: 'warn', ...overrides })
  const b = await startListening(t, redisUrls, { logLevel: 'warn', ...overrides })
  const call = async (method: Method, path: string, options: { token?: string; body?: object; on?: string; timeoutMs?: number } = {}) => {
    const res = await request(options.on ?? a.address, method, path, { timeoutMs: 20_000, ...options })
    if (res.status >= 400) errorSchema.parse(res.body)
    return { status: res.status, body: res.body, at: performance.now() }
  }
  const tok = (name: string) => `${name}-election-token-0123456789`
  let n = 0
  const fresh = () => `el${++n}-${Date.now()}`
  const campaign = async (name: string, candidate: string, body: object = {}) => {
    const res = await call('POST', `/elections/${name}/campaign`, { body: { candidate, ...body } })
    return { status: res.status, body: res.status < 300 ? leadershipSchema.parse(res.body) : res.body, raw: res.body }
  }
  const observe = async (name: string, query = '') => {
    const res = await call('GET', `/elections/${name}/observe${query}`, { on: b.address })
    if (res.status !== 200) throw new Error(`observe: ${res.status} ${JSON.stringify(res.body)}`)
    return { ...observedSchema.parse(res.body), at: res.at }
  }

  t.test('campaign: 201 with the leadership; GET shows the leader, never the token', async (t) => {
    const name = fresh()
    const before = Date.now()
    const won = await campaign(name, 'node-1', { value: 'http://10.0.0.1:8080', ttlMs: 5000, token: tok('one') })
    t.equal(won.status, 201)
    const lead = leadershipSchema.parse(won.raw)
    t.match(lead, { name, token: tok('one'), candidate: 'node-1', value: 'http://10.0.0.1:8080', revision: 1, ttlMs: 5000 })
    t.ok(lead.term > 0 && Number.isSafeInteger(lead.term), 'a term: a positive safe integer')
    t.ok(lead.validityMs > 0 && lead.validityMs <= 5000, 'validityMs within the TTL')
    t.ok(Date.parse(lead.since) >= before - 1000 && Date.parse(lead.since) <= Date.now() + 1000, 'since: the grant')
    const shown = await call('GET', `/elections/${name}`, { on: b.address })
    t.equal(shown.status, 200)
    const state = electionStateSchema.parse(shown.body)
    t.match(state, { name, term: lead.term, candidates: 0, transitions: 1 })
    t.match(state.leader, { candidate: 'node-1', value: 'http://10.0.0.1:8080', term: lead.term, revision: 1 })
    t.notMatch(JSON.stringify(shown.body), tok('one'), 'no token in GET')
    const none = await call('GET', `/elections/${fresh()}`)
    t.equal(none.status, 404, 'an election with no leader and no candidates: 404')
    t.match(none.body, { error: 'lock_not_found' })
  })

  t.test('a second candidate: 409 lock_held naming the leader; re-campaign with the token: 200, same term', async (t) => {
    const name = fresh()
    const first = leadershipSchema.parse((await campaign(name, 'node-1', { token: tok('first') })).raw)
    const second = await campaign(name, 'node-2')
    t.equal(second.status, 409)
    t.match(second.raw, { error: 'lock_held', leader: { candidate: 'node-1', term: first.term, since: first.since } })
    const again = await campaign(name, 'node-1', { token: tok('first') })
    t.equal(again.status, 200, 'the leader retrying its campaign: 200')
    t.match(again.body, { term: first.term, revision: 1, token: tok('first') })
    const state = electionStateSchema.parse((await call('GET', `/elections/${name}`)).body)
    t.equal(state.transitions, 1, 'a re-campaign begins no term')
  })

  t.test('candidate is required; value at most 4 KiB; names as lock keys', async (t) => {
    const name = fresh()
    const missing = await call('POST', `/elections/${name}/campaign`, { body: {} })
    t.equal(missing.status, 400)
    t.match(missing.body, { error: 'invalid_request' })
    const big = await call('POST', `/elections/${name}/campaign`, { body: { candidate: 'x', value: 'é'.repeat(2049) } })
    t.equal(big.status, 400, '4098 bytes of UTF-8: 400')
    const fits = await call('POST', `/elections/${name}/campaign`, { body: { candidate: 'x', value: 'v'.repeat(4096) } })
    t.equal(fits.status, 201, '4096 bytes: fine')
    const badName = await call('POST', '/elections/a%7Bb/campaign', { body: { candidate: 'x' } })
    t.equal(badName.status, 400, 'a brace in the name: 400')
    const query = await call('POST', `/elections/${fresh()}/campaign?candidate=by-query&value=v1&ttl=2s`)
    t.equal(query.status, 201, 'query forms, as for locks')
    t.match(query.body, { candidate: 'by-query', value: 'v1', ttlMs: 2000 })
  })

  t.test('proclaim: the leader only; observers see the value with the next revision', async (t) => {
    const name = fresh()
    const lead = leadershipSchema.parse((await campaign(name, 'p', { token: tok('p'), value: 'v1' })).raw)
    const other = await call('PUT', `/elections/${name}/proclaim`, { token: tok('other'), body: { value: 'x' } })
    t.equal(other.status, 409)
    t.match(other.body, { error: 'not_owner' })
    const nobody = await call('PUT', `/elections/${fresh()}/proclaim`, { token: tok('p'), body: { value: 'x' } })
    t.equal(nobody.status, 404)
    const seen = await observe(name)
    t.match(seen, { term: lead.term, revision: 1, leader: { value: 'v1' } })
    const waiting = observe(name, `?after=${lead.term}&revision=1&wait=10s`)
    await sleep(100)
    const sent = performance.now()
    const res = await call('PUT', `/elections/${name}/proclaim`, { token: tok('p'), body: { value: 'v2' } })
    t.equal(res.status, 200)
    t.match(proclaimedSchema.parse(res.body), { name, term: lead.term, revision: 2, value: 'v2' })
    const changed = await waiting
    t.match(changed, { term: lead.term, revision: 2, changed: true, leader: { value: 'v2', candidate: 'p' } })
    t.ok(changed.at - sent < 1000, `the observer knew within ${(changed.at - sent).toFixed(1)} ms`)
  })

  t.test('renew: the leader only; 404 after the term ended', async (t) => {
    const name = fresh()
    const lead = leadershipSchema.parse((await campaign(name, 'r', { token: tok('r'), ttlMs: 1000 })).raw)
    const renewed = await call('PUT', `/elections/${name}/renew`, { token: tok('r'), body: { ttlMs: 3000 } })
    t.equal(renewed.status, 200)
    t.match(renewedLeadershipSchema.parse(renewed.body), { name, term: lead.term, ttlMs: 3000 })
    t.equal((await call('PUT', `/elections/${name}/renew`, { token: tok('x') })).status, 409, 'another token: 409')
    t.equal((await call('DELETE', `/elections/${name}`, { token: tok('r') })).status, 200)
    const late = await call('PUT', `/elections/${name}/renew`, { token: tok('r') })
    t.equal(late.status, 404)
    t.match(late.body, { error: 'lock_not_found' })
  })

  t.test('resign: 200; again, or after the term lapsed: 404 lock_not_found; no key left but the term counter', async (t) => {
    const name = fresh()
    await campaign(name, 'q', { token: tok('q') })
    const resigned = await call('DELETE', `/elections/${name}`, { token: tok('q') })
    t.equal(resigned.status, 200)
    t.same(resigned.body, { name, resigned: true })
    const again = await call('DELETE', `/elections/${name}`, { token: tok('q') })
    t.equal(again.status, 404)
    t.match(again.body, { error: 'lock_not_found' })
    const lapsing = fresh()
    await campaign(lapsing, 'q', { token: tok('q'), ttlMs: 300 })
    await sleep(450)
    const late = await call('DELETE', `/elections/${lapsing}`, { token: tok('q') })
    t.equal(late.status, 404, 'resign after the term lapsed: 404')
    t.match(late.body, { error: 'lock_not_found' })
    t.equal((await call('GET', `/elections/${lapsing}`)).status, 404, 'no leader shown')
  })

  t.test('waiting in line: a resign hands leadership to the next candidate, a newer term; the wait runs out with 409', async (t) => {
    const name = fresh()
    const first = leadershipSchema.parse((await campaign(name, 'c1', { token: tok('c1'), ttlMs: 10_000 })).raw)
    const waiting = campaign(name, 'c2', { token: tok('c2'), waitMs: 10_000, value: 'two' })
    await sleep(200)
    t.equal(electionStateSchema.parse((await call('GET', `/elections/${name}`)).body).candidates, 1, 'one candidate in line')
    t.equal((await call('DELETE', `/elections/${name}`, { token: tok('c1') })).status, 200)
    const second = await waiting
    t.equal(second.status, 201)
    const lead = leadershipSchema.parse(second.raw)
    t.ok(lead.term > first.term, 'the next term is greater')
    t.match(lead, { candidate: 'c2', value: 'two', revision: 1 })
    const shown = electionStateSchema.parse((await call('GET', `/elections/${name}`)).body)
    t.match(shown.leader, { candidate: 'c2', value: 'two', term: lead.term })
    t.equal(shown.transitions, 2)
    const timedOut = await campaign(name, 'c3', { waitMs: 300 })
    t.equal(timedOut.status, 409)
    t.match(timedOut.raw, { error: 'lock_held', leader: { candidate: 'c2', term: lead.term } })
    t.ok((timedOut.raw as { waitedMs: number }).waitedMs >= 250, 'it waited')
  })

  t.test('observe, long poll: at once when different from after/revision, else on a change, else when the wait ends', async (t) => {
    const name = fresh()
    const never = await observe(name)
    t.match(never, { term: 0, revision: 0, leader: null, changed: true }, 'never had a leader')
    const idle = await observe(name, '?after=0&revision=0&wait=300ms')
    t.match(idle, { changed: false, leader: null }, 'the same state: the wait ran out')
    const pending = observe(name, '?after=0&revision=0&wait=10s')
    await sleep(100)
    const lead = leadershipSchema.parse((await campaign(name, 'o1', { token: tok('o1'), value: 'v' })).raw)
    t.match(await pending, { term: lead.term, revision: 1, changed: true, leader: { candidate: 'o1', value: 'v', term: lead.term } })
    t.match(await observe(name, `?after=${lead.term - 1}`), { term: lead.term, changed: true }, 'an older term: at once')
    t.match(await observe(name, `?after=${lead.term}&wait=200ms`), { changed: false, term: lead.term }, 'the same term: waits')
    const vacancy = observe(name, `?after=${lead.term}&revision=1&wait=10s`)
    await sleep(100)
    await call('DELETE', `/elections/${name}`, { token: tok('o1') })
    t.match(await vacancy, { term: lead.term, revision: 0, leader: null, reason: 'resigned', changed: true }, 'vacant, resigned')
    t.match(await observe(name, `?after=${lead.term}&revision=0&wait=200ms`), { changed: false, leader: null }, 'vacant as seen: waits')
  })

  t.test('observe: an expiry nobody pushes is seen within the watch timing (vacant, expired)', async (t) => {
    const name = fresh()
    const lead = leadershipSchema.parse((await campaign(name, 'e', { token: tok('e'), ttlMs: 600 })).raw)
    const expected = Date.parse(lead.expiresAt)
    const seen = await observe(name, `?after=${lead.term}&revision=1&wait=10s`)
    t.match(seen, { leader: null, reason: 'expired', term: lead.term })
    t.ok(Date.now() - expected < 500, `told ${Date.now() - expected} ms after the expiry`)
  })

  t.test('observe, event stream: the state first, then elected, proclaimed, vacant in order; terms never go back', async (t) => {
    const name = fresh()
    const stream = openEventStream(b.address, `/elections/${name}/observe?wait=20s`)
    t.teardown(() => stream.close())
    t.equal(await stream.status, 200)
    const [first] = await stream.next(1)
    t.match(first, { event: 'vacant', data: { term: 0, revision: 0 } })
    const one = leadershipSchema.parse((await campaign(name, 's1', { token: tok('s1'), value: 'a', ttlMs: 10_000 })).raw)
    const waiting = campaign(name, 's2', { token: tok('s2'), waitMs: 10_000, value: 'b' })
    await stream.next(2)
    await call('PUT', `/elections/${name}/proclaim`, { token: tok('s1'), body: { value: 'a2' } })
    await stream.next(3)
    await call('DELETE', `/elections/${name}`, { token: tok('s1') })
    const two = leadershipSchema.parse((await waiting).raw)
    const events = await stream.next(5)
    t.same(
      events.map((e) => e.event),
      ['vacant', 'elected', 'proclaimed', 'vacant', 'elected'],
    )
    t.match(events[1]?.data, { term: one.term, revision: 1, candidate: 's1', value: 'a' })
    t.match(events[2]?.data, { term: one.term, revision: 2, value: 'a2' })
    t.match(events[3]?.data, { term: one.term, revision: 0, reason: 'resigned' })
    t.match(events[4]?.data, { term: two.term, revision: 1, candidate: 's2', value: 'b' })
    t.equal(events[4]?.id, `${two.term}.1`, 'the id: term.revision')
    const terms = events.map((e) => e.data.term as number)
    t.same(
      terms,
      [...terms].sort((x, y) => x - y),
      'terms never go backwards',
    )
    await call('DELETE', `/elections/${name}?force=true`)
    const [, , , , , forced] = await stream.next(6)
    t.match(forced, { event: 'vacant', data: { term: two.term, reason: 'force_released' } })
  })

  t.test("watch: the leader's own hold, lost when force-released", async (t) => {
    const name = fresh()
    await campaign(name, 'w', { token: tok('w'), ttlMs: 10_000 })
    const watching = call('GET', `/elections/${name}/watch?wait=10s`, { token: tok('w'), on: b.address })
    await sleep(100)
    t.equal((await call('DELETE', `/elections/${name}?force=true`)).status, 200)
    t.match((await watching).body, { held: false, reason: 'force_released' })
  })

  t.test('admin listing: elections with a leader, never a token', async (t) => {
    const name = `listed-${fresh()}`
    await campaign(name, 'lister', { token: tok('lister'), value: 'v' })
    const page = await call('GET', `/elections?prefix=${name}`)
    t.equal(page.status, 200)
    t.match(page.body, { items: [{ name, leader: { candidate: 'lister', value: 'v' } }] })
    t.notMatch(JSON.stringify(page.body), tok('lister'))
  })

  t.test('sessions bind candidacies: one keepalive keeps leadership and locks; closing it ends the term (session_lost)', async (t) => {
    const name = fresh()
    const lockKey = fresh()
    const opened = await call('POST', '/sessions', { body: { ttlMs: 800 } })
    const id = opened.body.id as string
    const lead = leadershipSchema.parse((await campaign(name, 'sess', { session: id, token: tok('sess') })).raw)
    t.ok(lead.ttlMs <= 800 && lead.ttlMs > 500, `the leadership's lease is what the session has left (${lead.ttlMs} ms)`)
    t.equal((await call('POST', `/locks/${lockKey}`, { token: tok('sess-lock'), body: { session: id } })).status, 201)
    const waiting = campaign(name, 'next', { token: tok('next'), waitMs: 10_000 })
    for (let i = 0; i < 5; i++) {
      await sleep(300)
      const kept = await call('PUT', `/sessions/${id}/keepalive`)
      t.equal(kept.status, 200, `keepalive ${i + 1}`)
      t.equal((kept.body.holds as unknown[]).length, 2, 'it renews the leadership and the lock')
    }
    t.match(electionStateSchema.parse((await call('GET', `/elections/${name}`)).body).leader, { candidate: 'sess', term: lead.term })
    const stream = openEventStream(b.address, `/elections/${name}/observe?wait=20s`)
    t.teardown(() => stream.close())
    await stream.next(1)
    t.equal((await call('DELETE', `/sessions/${id}`)).status, 200)
    const next = leadershipSchema.parse((await waiting).raw)
    t.ok(next.term > lead.term, 'the next candidate leads, with a newer term')
    const events = await stream.next(3)
    t.same(
      events.map((e) => [e.event, e.data.reason ?? null]),
      [
        ['elected', null],
        ['vacant', 'session_lost'],
        ['elected', null],
      ],
    )
  })

  t.test('a leadership bound to a session that lapses: vacant, session_lost', async (t) => {
    const name = fresh()
    const opened = await call('POST', '/sessions', { body: { ttlMs: 500 } })
    const lead = leadershipSchema.parse((await campaign(name, 'lapse', { session: opened.body.id as string })).raw)
    const seen = await observe(name, `?after=${lead.term}&revision=1&wait=10s`)
    t.match(seen, { leader: null, term: lead.term, reason: 'session_lost' })
  })

  t.test('a waiting candidate whose client hangs up leaves the line and never leads', async (t) => {
    const name = fresh()
    await campaign(name, 'first', { token: tok('first'), ttlMs: 10_000 })
    await call('POST', `/elections/${name}/campaign`, {
      body: { candidate: 'gone', token: tok('gone'), waitMs: 10_000 },
      timeoutMs: 300,
    }).then(
      () => t.fail('the hung-up campaign should not have answered'),
      (err: Error) => t.equal(err.name, 'RequestTimeout', 'the client hung up'),
    )
    await sleep(200)
    t.equal(electionStateSchema.parse((await call('GET', `/elections/${name}`)).body).candidates, 0, 'it left the line')
    t.equal((await call('DELETE', `/elections/${name}`, { token: tok('first') })).status, 200)
    await sleep(200)
    t.equal((await call('GET', `/elections/${name}`)).status, 404, 'nobody leads: not the candidate that hung up')
  })
}
