import t from 'tap'
import { contendOnNewApp } from '../helpers/contenders.js'

t.test('16 HTTP clients contending on hot keys: no overlapping holds, fences increase', async (t) => {
  const { stats, history } = await contendOnNewApp(t, 1, { keys: ['hot-1', 'hot-2'], clients: 16, durationMs: 3000, ttlMs: 2000 })
  t.same(stats.unexpected, [], 'only 201, 409 and release 200 were seen')
  t.ok(
    stats.unavailable <= stats.grants / 20,
    `${stats.unavailable} answers 503 (a node timeout on an overloaded machine is a correct 503; a stream of them is not)`,
  )
  t.ok(stats.grants >= 100, `${stats.grants} grants, ${stats.conflicts} conflicts`)
  t.ok(stats.conflicts > 0, 'the clients really contended')
  history.assertSafe(t, 'exclusive locks, 16 clients, one Redis')
})

t.test('short TTLs that lapse while held: the next holder starts after the lapse, fences increase', async (t) => {
  // Holders keep the lock past its TTL half of the time: the history must still be safe, since a
  // hold counts only within its validity.
  const { stats, history } = await contendOnNewApp(t, 1, {
    keys: ['lapse'],
    clients: 16,
    durationMs: 2500,
    ttlMs: 100,
    holdMs: () => (Math.random() < 0.5 ? 130 : 0),
  })
  t.same(stats.unexpected, [])
  t.ok(stats.grants >= 20, `${stats.grants} grants`)
  history.assertSafe(t, 'exclusive locks with lapsing TTLs')
})
