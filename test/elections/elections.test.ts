import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import YAML from 'yaml'
import { openapiPath } from '../../src/app.js'
import { leadershipSchema } from '../../src/http/schemas/elections.js'
import { loadConfig } from '../../src/config.js'
import { buildApp } from '../../src/app.js'
import { startListening } from '../../harness/app.js'
import { request } from '../../harness/http.js'
import { startRedis } from '../../harness/redis-server.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import { writeAuthFile } from '../helpers/auth-file.js'
import { openEventStream } from '../../harness/event-stream.js'
import { electionSuite } from '../suites/election.js'

t.test('elections on one Redis', async (t) => {
  const redis = await startRedis({ t })
  await electionSuite(t, [redis.url])
})

t.test('observe: a stream that may have missed something says resync; terms never go back across a Redis restart', async (t) => {
  const redis = await startRedis({ t })
  const { address } = await startListening(t, [redis.url], { logLevel: 'error' })
  const campaign = async (name: string, candidate: string) =>
    leadershipSchema.parse((await request(address, 'POST', `/elections/${name}/campaign`, { body: { candidate, ttlMs: 20_000 } })).body)

  t.test('the pub/sub connection dropped: resync with the current state', async (t) => {
    const lead = await campaign('resync-drop', 'a')
    const stream = openEventStream(address, '/elections/resync-drop/observe?wait=20s')
    t.teardown(() => stream.close())
    await stream.next(1)
    const admin = redis.client()
    t.teardown(() => admin.quit())
    t.ok(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')) >= 1, 'the subscriptions were cut')
    const [, resync] = await stream.next(2)
    t.match(resync, { event: 'resync', data: { term: lead.term, revision: 1, leader: { candidate: 'a', term: lead.term } } })
  })

  t.test('a long poll on the same state is not ended by a resync that changes nothing', async (t) => {
    const lead = await campaign('resync-poll', 'a')
    const started = Date.now()
    const polling = request(address, 'GET', `/elections/resync-poll/observe?after=${lead.term}&revision=1&wait=1500ms`)
    await sleep(300)
    const admin = redis.client()
    t.teardown(() => admin.quit())
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    const answer = await polling
    t.match(answer.body, { changed: false, term: lead.term, revision: 1 })
    t.ok(Date.now() - started >= 1400, `it waited its whole wait (${Date.now() - started} ms)`)
  })

  t.test('Redis restarted empty: resync (no leader, the term that ended), then a newer term', async (t) => {
    const lead = await campaign('resync-restart', 'a')
    const stream = openEventStream(address, '/elections/resync-restart/observe?wait=30s')
    t.teardown(() => stream.close())
    await stream.next(1)
    await redis.restart()
    const [, resync] = await stream.next(2, 15_000)
    t.match(resync, { event: 'resync', data: { leader: null, term: lead.term, revision: 0 } }, 'the leadership was lost with the data')
    let next: ReturnType<typeof leadershipSchema.parse> | undefined
    for (let i = 0; i < 50 && !next; i++) {
      const res = await request(address, 'POST', '/elections/resync-restart/campaign', { body: { candidate: 'b' } })
      if (res.status === 201) next = leadershipSchema.parse(res.body)
      else await sleep(100)
    }
    t.ok(next && next.term > lead.term, 'the next term is greater than the one the lost data had')
    const events = await stream.next(3, 15_000)
    t.match(events[2], { event: 'elected', data: { candidate: 'b', term: next?.term } })
    const terms = events.map((e) => e.data.term as number)
    t.same(
      terms,
      [...terms].sort((x, y) => x - y),
      'never a term going back',
    )
  })
})

t.test('resign after the term lapsed: 404 lock_not_found, and no key left behind but the term counters', async (t) => {
  const redis = await startRedis({ t })
  const { address } = await startListening(t, [redis.url], { logLevel: 'error' })
  const lead = leadershipSchema.parse(
    (await request(address, 'POST', '/elections/lapsed/campaign', { body: { candidate: 'a', ttlMs: 300, value: 'v' } })).body,
  )
  await sleep(450)
  const late = await request(address, 'DELETE', '/elections/lapsed', { token: lead.token })
  t.equal(late.status, 404)
  t.match(late.body, { error: 'lock_not_found' })
  const keys = await redis.keys()
  t.same(
    Object.keys(keys).sort(),
    ['lock-service:elect:{lapsed}:e', 'lock-service:elect:{lapsed}:fence'],
    'only the term counter and the terms begun, which outlive every term on purpose',
  )
  t.match(keys['lock-service:elect:{lapsed}:e'], /^hash\|ttl\|/, 'and they expire')
  t.match(keys['lock-service:elect:{lapsed}:fence'], /^string\|ttl\|/)
})

t.test('API keys: prefixes apply to election names; listing and force-release need an admin key', async (t) => {
  const redis = await startRedis({ t })
  const keys = [
    { name: 'billing', secret: 'sk_billing_0123456789abcdef', prefixes: ['billing:'] },
    { name: 'ops', secret: 'sk_ops_admin_0123456789abcdef', prefixes: [], admin: true },
  ]
  const app = await buildApp(loadConfig({ REDIS_URLS: redis.url, AUTH_FILE: writeAuthFile(keys), LOG_LEVEL: 'error' }))
  t.teardown(() => app.close())
  const as = (secret: string | undefined, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: secret ? { authorization: `Bearer ${secret}` } : {}, ...(payload ? { payload } : {}) })
  const billing = 'sk_billing_0123456789abcdef'
  const ops = 'sk_ops_admin_0123456789abcdef'
  t.equal((await as(undefined, 'GET', '/elections/billing:x')).statusCode, 401, 'no key: 401')
  const won = await as(billing, 'POST', '/elections/billing:x/campaign', { candidate: 'b1' })
  t.equal(won.statusCode, 201, 'inside its prefix')
  const token = (won.json() as { token: string }).token
  for (const [method, url, payload] of [
    ['POST', '/elections/other/campaign', { candidate: 'b1' }],
    ['PUT', '/elections/other/proclaim', { value: 'v' }],
    ['PUT', '/elections/other/renew', undefined],
    ['DELETE', '/elections/other', undefined],
    ['GET', '/elections/other', undefined],
    ['GET', '/elections/other/observe', undefined],
    ['GET', '/elections/other/watch', undefined],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${billing}`, 'lock-token': token },
      ...(payload ? { payload } : {}),
    })
    t.equal(res.statusCode, 403, `${method} ${url}: outside its prefixes`)
  }
  t.equal((await as(billing, 'GET', '/elections')).statusCode, 403, 'the listing: admin only')
  t.equal((await as(billing, 'DELETE', '/elections/billing:x?force=true')).statusCode, 403, 'force-release: admin only')
  t.equal((await as(ops, 'GET', '/elections?prefix=billing:')).statusCode, 200)
  t.equal((await as(ops, 'DELETE', '/elections/billing:x?force=true')).statusCode, 200, 'an admin key force-releases')
  t.equal((await as(billing, 'GET', '/elections/billing:x')).statusCode, 404, 'no leader afterwards')
})

t.test('metrics: leaders elected, vacancies by reason, observers, campaign wait, leaderless time', async (t) => {
  const redis = await startRedis({ t })
  const { app, address } = await startListening(t, [redis.url], { logLevel: 'error' })
  const metric = async (line: RegExp) => {
    const text = (await app.inject({ url: '/metrics' })).body
    const found = text.split('\n').find((l) => line.test(l))
    return found === undefined ? undefined : Number(found.split(' ').pop())
  }
  t.equal(await metric(/^lock_election_leaders_total /), 0, 'exported at 0 from start')
  t.equal(await metric(/^lock_election_vacancies_total\{reason="expired"\} /), 0)
  t.equal(await metric(/^lock_election_campaign_wait_seconds_count\{outcome="elected"\} /), 0)
  const first = leadershipSchema.parse((await request(address, 'POST', '/elections/m/campaign', { body: { candidate: 'a' } })).body)
  t.equal(await metric(/^lock_election_leaders_total /), 1)
  const polling = request(address, 'GET', `/elections/m/observe?after=${first.term}&revision=1&wait=10s`)
  const waiting = request(address, 'POST', '/elections/m/campaign', { body: { candidate: 'b', waitMs: 10_000 } })
  await sleep(200)
  t.equal(await metric(/^lock_election_observers /), 1, 'one observer parked')
  await request(address, 'DELETE', '/elections/m', { token: first.token })
  await polling
  const second = leadershipSchema.parse((await waiting).body)
  t.equal(await metric(/^lock_election_leaders_total /), 2)
  t.equal(await metric(/^lock_election_vacancies_total\{reason="resigned"\} /), 1)
  t.equal(await metric(/^lock_election_campaign_wait_seconds_count\{outcome="elected"\} /), 1)
  t.equal(await metric(/^lock_election_observers /), 0)
  // An observed election left without a leader: the leaderless time grows until a leader is elected.
  const stream = openEventStream(address, '/elections/m/observe?wait=20s')
  t.teardown(() => stream.close())
  await stream.next(1)
  await request(address, 'DELETE', '/elections/m', { token: second.token })
  await stream.next(2)
  await sleep(600)
  const leaderless = (await metric(/^lock_election_leaderless_seconds /)) ?? 0
  t.ok(leaderless >= 0.5 && leaderless < 5, `leaderless for ${leaderless} s`)
  await request(address, 'POST', '/elections/m/campaign', { body: { candidate: 'c' } })
  await stream.next(3)
  t.equal(await metric(/^lock_election_leaderless_seconds /), 0, 'a leader again: 0')
})

t.test("observe's event stream sends what openapi.yaml declares: each event, its id, and its data's fields", async (t) => {
  type Schema = { properties?: Record<string, Schema>; required?: string[]; const?: unknown }
  const doc = YAML.parse(await readFile(openapiPath, 'utf8')) as {
    paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, { schema: { oneOf?: Schema[] } }> }> } }>
  }
  const declared = doc.paths['/elections/{name}/observe']?.get?.responses['200']?.content?.['text/event-stream']?.schema.oneOf ?? []
  t.same(
    declared.map((e) => e.properties?.event?.const),
    ['elected', 'proclaimed', 'vacant', 'resync'],
  )
  const redis = await startRedis({ t })
  const { address } = await startListening(t, [redis.url], { logLevel: 'error' })
  const stream = openEventStream(address, '/elections/contract/observe?wait=20s')
  t.teardown(() => stream.close())
  await stream.next(1)
  const lead = leadershipSchema.parse(
    (await request(address, 'POST', '/elections/contract/campaign', { body: { candidate: 'a', value: 'v' } })).body,
  )
  await stream.next(2)
  await request(address, 'PUT', '/elections/contract/proclaim', { token: lead.token, body: { value: 'w' } })
  await stream.next(3)
  const admin = redis.client()
  t.teardown(() => admin.quit())
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
  await stream.next(4)
  await request(address, 'DELETE', '/elections/contract', { token: lead.token })
  const events = await stream.next(5)
  t.same(
    events.map((e) => e.event),
    ['vacant', 'elected', 'proclaimed', 'resync', 'vacant'],
  )
  for (const e of events) {
    const schema = declared.find((d) => d.properties?.event?.const === e.event)?.properties?.data
    const fields = Object.keys(e.data)
    t.ok(
      fields.every((f) => f in (schema?.properties ?? {})),
      `${e.event}: only declared fields (${fields.join(', ')})`,
    )
    t.ok(
      (schema?.required ?? ['(undeclared)']).every((f) => fields.includes(f)),
      `${e.event}: every required field`,
    )
    t.match(e.id, /^\d+\.\d+$/, `${e.event}: id "<term>.<revision>"`)
  }
})

t.test('an observer is never told an older term by another replica than the one it saw', async (t) => {
  const redis = await startRedis({ t })
  const proxy = await startProxy({ port: redis.port }, { t })
  // A reads Redis directly; B through a proxy that can cut it off.
  const a = await startListening(t, [redis.url], { logLevel: 'error' })
  const b = await startListening(t, [proxy.url], { logLevel: 'error', nodeTimeoutMs: 300 })
  const campaign = async (name: string, candidate: string) =>
    leadershipSchema.parse((await request(a.address, 'POST', `/elections/${name}/campaign`, { body: { candidate, ttlMs: 20_000 } })).body)

  t.test('B cut off from Redis, behind what the caller saw on A: 503, not its older state', async (t) => {
    const first = await campaign('behind', 'one')
    const stream = openEventStream(b.address, '/elections/behind/observe?wait=20s')
    t.teardown(() => stream.close())
    await stream.next(1)
    proxy.cut('silent')
    t.teardown(() => proxy.heal())
    await request(a.address, 'DELETE', '/elections/behind', { token: first.token })
    const second = await campaign('behind', 'two')
    const asked = await request(b.address, 'GET', `/elections/behind/observe?after=${second.term}&revision=1&wait=2s`, {
      timeoutMs: 10_000,
    })
    t.equal(asked.status, 503, `B cannot tell: 503 (${JSON.stringify(asked.body).slice(0, 80)})`)
    t.notMatch(JSON.stringify(asked.body), String(first.term), 'and never the older term')
    proxy.heal()
  })

  t.test('the nodes lost the term (a restart without persistence): no leader after the term the caller saw, not term 0', async (t) => {
    const lead = await campaign('lost', 'one')
    await redis.restart()
    await sleep(300)
    const asked = await request(b.address, 'GET', `/elections/lost/observe?after=${lead.term}&revision=1&wait=2s`, { timeoutMs: 10_000 })
    t.equal(asked.status, 200)
    t.match(asked.body, { term: lead.term, revision: 0, leader: null, changed: true })
    const resumed = openEventStream(b.address, '/elections/lost/observe?wait=1s', { 'last-event-id': `${lead.term}.1` })
    t.teardown(() => resumed.close())
    const [first] = await resumed.next(1)
    t.match(first, { event: 'vacant', id: `${lead.term}.0`, data: { term: lead.term } }, 'a resumed stream too (Last-Event-ID)')
  })
})
