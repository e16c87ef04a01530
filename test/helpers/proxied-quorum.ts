import type { Test } from 'tap'
import { startApp } from '../../harness/app.js'
import { startRedisCluster } from '../../harness/redis-server.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import type { Config } from '../../src/config.js'
import { until } from './until.js'

/**
 * Three Redis masters (`nodes`, to reach one directly), each behind a TCP proxy (to cut it off or slow
 * it down), and an app on the proxies. `cutOff(i)` resets node i's connections and resolves once the app sees it down; `heal(i)`
 * lets it back and resolves once its answers count again (a reconnected node is identified first).
 */
export async function proxiedQuorum(t: Test, overrides: Partial<Config>) {
  const nodes = await startRedisCluster(3, { t })
  const proxies = await Promise.all(nodes.map((n) => startProxy({ port: n.port }, { t })))
  const { app } = await startApp(
    t,
    proxies.map((p) => p.url),
    overrides,
  )
  const nodeView = async (index: number) =>
    ((await app.inject({ method: 'GET', url: '/readyz' })).json().nodes as { up: boolean; vote: string }[])[index]
  const cutOff = async (index: number) => {
    proxies[index]!.cut('reset')
    await until(async () => (await nodeView(index))?.up === false, `node ${index} seen down`)
  }
  const heal = async (index: number) => {
    proxies[index]!.heal()
    await until(async () => (await nodeView(index))?.vote === 'counts', `node ${index} back and voting`, 10_000)
  }
  return { app, nodes, proxies, cutOff, heal }
}
