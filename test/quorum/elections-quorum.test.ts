import t from 'tap'
import { leadershipSchema } from '../../src/http/schemas/elections.js'
import { startApp } from '../../harness/app.js'
import { startRedisCluster } from '../../harness/redis-server.js'
import { electionSuite } from '../suites/election.js'

t.test('elections on a quorum of 3 Redis masters', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  await electionSuite(
    t,
    nodes.map((n) => n.url),
  )
})

t.test('a term needs a majority, and terms keep rising as the majority changes', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: 250, logLevel: 'error' },
  )
  const campaign = async (name: string, candidate: string) => {
    const res = await app.inject({ method: 'POST', url: `/elections/${name}/campaign`, payload: { candidate, ttlMs: 1000 } })
    return { status: res.statusCode, body: res.json() as Record<string, unknown> }
  }
  const terms: number[] = []
  const elect = async (name: string, candidate: string) => {
    const won = await campaign(name, candidate)
    t.equal(won.status, 201, `${candidate} elected`)
    const lead = leadershipSchema.parse(won.body)
    terms.push(lead.term)
    t.equal((await app.inject({ method: 'DELETE', url: `/elections/${name}`, headers: { 'lock-token': lead.token } })).statusCode, 200)
  }
  await elect('majority', 'all-three')
  await nodes[0]!.stop()
  await elect('majority', 'nodes-1-2')
  await nodes[0]!.restart()
  await nodes[2]!.stop()
  // Node 0 came back empty (no term counter): it is quarantined, so only node 1 may vote — no majority.
  const none = await campaign('majority', 'one-node')
  t.equal(none.status, 503, 'one voting node of three: no term')
  t.match(none.body, { error: 'backend_unavailable' })
  const shown = await app.inject({ url: '/elections/majority' })
  t.equal(shown.statusCode, 503, 'nor can anyone say who leads')
  await nodes[2]!.restart()
  t.same(
    terms,
    [...terms].sort((a, b) => a - b),
    'terms rise',
  )
  t.equal(new Set(terms).size, terms.length, 'strictly')
})

t.test('a leader granted on a bare majority is shown, whichever nodes answer first', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
    { nodeTimeoutMs: 250, logLevel: 'error' },
  )
  const won = await app.inject({ method: 'POST', url: '/elections/bare/campaign', payload: { candidate: 'two-of-three', ttlMs: 30_000 } })
  t.equal(won.statusCode, 201)
  const term = leadershipSchema.parse(won.json()).term
  // Node 2 loses the hold (as a node the grant missed): it answers every look with no leader.
  const third = nodes[2]!.client()
  t.teardown(() => third.quit())
  t.equal(await third.del('lock-service:elect:{bare}'), 1)
  let shown = 0
  for (let i = 0; i < 30; i++) {
    const res = await app.inject({ url: '/elections/bare' })
    if (res.statusCode === 200 && (res.json() as { leader: { term: number } | null }).leader?.term === term) shown++
  }
  t.equal(shown, 30, 'every look shows the leader (a node without the hold is outvoted, not believed)')
})
