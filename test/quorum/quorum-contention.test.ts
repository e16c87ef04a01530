import t from 'tap'
import { contendOnNewReplicas } from '../helpers/contenders.js'

t.test('two service processes sharing three Redis nodes: 16 clients, no overlapping holds', async (t) => {
  const {
    replicas: [a, b],
    stats,
    history,
  } = await contendOnNewReplicas(t, 3, { keys: ['shared-1', 'shared-2'], clients: 16, durationMs: 4000, ttlMs: 2000 })
  t.same(stats.unexpected, [])
  t.ok(
    stats.unavailable <= stats.grants / 20,
    `${stats.unavailable} answers 503 (a node timeout on an overloaded machine is a correct 503; a stream of them is not)`,
  )
  t.ok(stats.grants >= 100, `${stats.grants} grants, ${stats.conflicts} conflicts across two replicas`)
  history.assertSafe(t, 'two replicas, quorum of 3')
  t.equal(await a.stop(), 0, 'replica A drains and exits 0 on SIGTERM')
  t.equal(await b.stop(), 0, 'replica B drains and exits 0 on SIGTERM')
})
