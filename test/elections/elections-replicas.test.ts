import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { leadershipSchema } from '../../src/http/schemas/elections.js'
import { openEventStream } from '../../harness/event-stream.js'
import { request } from '../../harness/http.js'
import { startRedis } from '../../harness/redis-server.js'
import { startReplicas, type ServiceProcess } from '../../harness/service-process.js'

// A term begun and ended through replica A while replica B is not looking (its process stopped, so
// the push waits in its socket): B's follower then reads the election only after the term is over.
// Its observers must still be told that the election moved on (no leader after the newer term).

t.test('a term begun and ended through another replica is not missed by observers', async (t) => {
  const redis = await startRedis({ t })
  const [a, b] = await startReplicas([redis.url], { t })
  const campaign = async (name: string, candidate: string) => {
    const res = await request(a.url, 'POST', `/elections/${name}/campaign`, { body: { candidate, ttlMs: 20_000 } })
    return leadershipSchema.parse(res.body)
  }
  const resign = async (name: string, token: string) => {
    const res = await request(a.url, 'DELETE', `/elections/${name}`, { token })
    if (res.status !== 200) throw new Error(`resign: ${res.status} ${JSON.stringify(res.body)}`)
  }
  /** Runs `quick` (through A) while B's process is stopped: B sees the pushes only afterwards. */
  const whileStopped = async (replica: ServiceProcess, quick: () => Promise<void>) => {
    process.kill(replica.pid, 'SIGSTOP')
    try {
      await quick()
    } finally {
      process.kill(replica.pid, 'SIGCONT')
    }
  }
  /** A term begun and ended through A: the vacancy an observer starts from. */
  const vacancyThroughA = async (name: string) => {
    const first = await campaign(name, 'first')
    await resign(name, first.token)
    return first.term
  }

  t.test('a long poll parked on the vacancy before: answered with the newer vacancy', async (t) => {
    const previous = await vacancyThroughA('parked-poll')
    const polling = request(b.url, 'GET', `/elections/parked-poll/observe?after=${previous}&revision=0&wait=4s`, { timeoutMs: 10_000 })
    await sleep(300)
    let quick = 0
    await whileStopped(b, async () => {
      const lead = await campaign('parked-poll', 'quick')
      await resign('parked-poll', lead.token)
      quick = lead.term
    })
    const answer = await polling
    t.equal(answer.status, 200)
    t.match(answer.body, { changed: true, term: quick, revision: 0, leader: null }, 'the term that came and went is reported')
    t.ok(quick > previous, 'a newer term than the one the observer saw')
  })

  t.test('an event stream on the vacancy before: a vacant with the newer term', async (t) => {
    const previous = await vacancyThroughA('parked-stream')
    const stream = openEventStream(b.url, `/elections/parked-stream/observe?wait=4s`)
    t.teardown(() => stream.close())
    const [first] = await stream.next(1)
    t.match(first, { event: 'vacant', data: { term: previous } })
    let quick = 0
    await whileStopped(b, async () => {
      const lead = await campaign('parked-stream', 'quick')
      await resign('parked-stream', lead.token)
      quick = lead.term
    })
    const [, next] = await stream.next(2)
    t.match(next, { data: { term: quick, revision: 0 } }, 'the stream moves on to the newer term')
    t.ok(next?.event === 'vacant' || next?.event === 'resync', `as a vacant or a resync (${next?.event})`)
  })

  t.test('a leader shown, then its resignation and another whole term: the observer ends on the newer term', async (t) => {
    const lead = await campaign('after-leader', 'one')
    const stream = openEventStream(b.url, '/elections/after-leader/observe?wait=4s')
    t.teardown(() => stream.close())
    await stream.next(1)
    let quick = 0
    await whileStopped(b, async () => {
      await resign('after-leader', lead.token)
      const next = await campaign('after-leader', 'two')
      await resign('after-leader', next.token)
      quick = next.term
    })
    const events = await stream.next(2)
    const last = events.at(-1)
    let latest = last?.data.term
    if (latest !== quick) {
      // The vacancy of the first term may come alone first: the newer one must follow it.
      const more = await stream.next(events.length + 1)
      latest = more.at(-1)?.data.term
    }
    t.equal(latest, quick, 'the stream ends on the newer term')
    const asked = await request(b.url, 'GET', `/elections/after-leader/observe?after=${lead.term}&revision=0&wait=2s`, {
      timeoutMs: 10_000,
    })
    t.match(asked.body, { changed: true, term: quick, leader: null }, 'and a long poll on the first vacancy is answered with it')
  })

  t.test('many quick terms through A, each with a long poll parked on B: none is missed', async (t) => {
    let seen = await vacancyThroughA('many')
    let missed = 0
    const rounds = 60
    for (let i = 0; i < rounds; i++) {
      const polling = request(b.url, 'GET', `/elections/many/observe?after=${seen}&revision=0&wait=2s`, { timeoutMs: 10_000 })
      await sleep(20)
      const lead = await campaign('many', 'quick')
      await resign('many', lead.token)
      const answer = await polling
      const body = answer.body as { term?: number; changed?: boolean; leader?: unknown }
      if (!body.changed || body.term === seen) missed++
      // The answer may be the leader (its look came in time) or the vacancy after it: move on to the vacancy.
      const vacancy = await request(b.url, 'GET', `/elections/many/observe?after=${lead.term}&revision=1&wait=2s`, { timeoutMs: 10_000 })
      if (body.term !== lead.term || (vacancy.body as { term?: number }).term !== lead.term) missed++
      seen = lead.term
    }
    t.equal(missed, 0, `${rounds} quick terms, every one reported to the observer parked on the other replica`)
  })
})
