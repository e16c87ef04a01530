/**
 * Concurrent shared holds on a quorum: two read holds granted at the same time by different majorities
 * must still carry different fences (each node numbers them in the order they arrive, and a grant takes
 * the largest proposal of its majority, so without the commit rule two grants could end on one value).
 */
import t from 'tap'
import { startRedisCluster } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const PAIRS = 500

t.test('two read holds acquired at once through two replicas never share a fence (quorum of 3)', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const urls = nodes.map((n) => n.url)
  const [{ app: a }, { app: b }] = await Promise.all([startApp(t, urls, { logLevel: 'warn' }), startApp(t, urls, { logLevel: 'warn' })])
  let shared = 0
  let granted = 0
  for (let i = 0; i < PAIRS; i++) {
    const url = `/rwlocks/concurrent-reads-${i % 10}/read?ttl=1s`
    const [x, y] = await Promise.all([a.inject({ method: 'POST', url }), b.inject({ method: 'POST', url })])
    if (x.statusCode !== 201 || y.statusCode !== 201) continue
    granted++
    if (x.json().fence === y.json().fence) shared++
    await Promise.all([
      a.inject({ method: 'DELETE', url: url.replace('?ttl=1s', ''), headers: { 'lock-token': x.json().token } }),
      b.inject({ method: 'DELETE', url: url.replace('?ttl=1s', ''), headers: { 'lock-token': y.json().token } }),
    ])
  }
  t.ok(granted >= PAIRS * 0.9, `${granted} of ${PAIRS} pairs both granted`)
  t.equal(shared, 0, `${shared} of ${granted} pairs of concurrent read holds shared a fence`)
})
