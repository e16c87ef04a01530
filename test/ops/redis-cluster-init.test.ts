/**
 * deploy/kubernetes/overlays/cluster/redis-cluster-init.sh (the cluster overlay's Job and the compose
 * cluster profile run it), on six real redis-server processes: it joins them into 3 masters with a
 * replica each, does nothing when run again, and fails with a clear line when a node never answers.
 * Also the overlay's readiness probe of a cluster node: not ready before the cluster exists, ready after.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { freePort, startRedisCluster } from '../../harness/redis-server.js'
import { execProbe } from '../helpers/exec-probe.js'
import { kustomize } from '../helpers/kustomize.js'
import { until } from '../helpers/until.js'

const run = promisify(execFile)
const overlay = fileURLToPath(new URL('../../deploy/kubernetes/overlays/cluster', import.meta.url))
const statefulSet = kustomize(overlay).find((m) => m.kind === 'StatefulSet' && m.metadata.name === 'redis-cluster')
const readiness = (
  statefulSet?.spec as { template: { spec: { containers: { readinessProbe?: { exec?: { command: string[] } } }[] } } } | undefined
)?.template.spec.containers[0]?.readinessProbe?.exec?.command
const script = fileURLToPath(new URL('../../deploy/kubernetes/overlays/cluster/redis-cluster-init.sh', import.meta.url))
const init = (nodes: string[], extra: Record<string, string> = {}) =>
  run('sh', [script], {
    env: { ...process.env, REDIS_CLUSTER_NODES: nodes.join(' '), REDIS_CLUSTER_REPLICAS: '1', ...extra },
    timeout: 60_000,
  })

t.test('joins six nodes into 3 masters + 3 replicas, once', async (t) => {
  const nodes = await startRedisCluster(6, { t, args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '1000'] })
  const probe = execProbe(t, readiness ?? ['false'])
  t.same(
    nodes.map((n) => probe(n.port)),
    nodes.map(() => 1),
    'before: no node is ready (the readiness probe of the cluster overlay)',
  )
  const first = await init(nodes.map((n) => n.address))
  t.match(first.stdout, /All 16384 slots covered/, 'redis-cli created the cluster')

  const client = nodes[0]?.client()
  t.teardown(() => client?.disconnect())
  await until(async () => /cluster_state:ok/.test((await client?.cluster('INFO')) ?? ''), 'cluster_state:ok', 10_000, 100)
  const table = async () =>
    String(await client?.cluster('NODES'))
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([id, address, flags]) => ({
        id,
        port: Number(address?.split('@')[0]?.split(':')[1]),
        role: flags?.includes('master') ? 'master' : 'replica',
      }))
      .sort((a, b) => a.port - b.port)
  await until(async () => (await table()).filter((n) => n.role === 'replica').length === 3, 'three replicas', 10_000, 100)
  const before = await table()
  t.same(
    before.map((n) => n.port),
    nodes.map((n) => n.port).sort((a, b) => a - b),
    'every node is in it',
  )
  t.equal(before.filter((n) => n.role === 'master').length, 3, '3 masters')
  await until(async () => nodes.every((n) => probe(n.port) === 0), 'every node ready (replicas in sync)', 10_000, 100)
  t.pass('after: every node is ready')

  const again = await init(nodes.map((n) => n.address))
  t.match(again.stdout, /already knows 6 nodes: the cluster exists/, 'run again: nothing to do')
  t.same(await table(), before, 'the same nodes in the same roles')
})

t.test('a node that never answers: exit 1, naming it', async (t) => {
  const nowhere = `127.0.0.1:${await freePort()}`
  await t.rejects(init([nowhere], { REDIS_CLUSTER_WAIT_SECONDS: '1' }), { code: 1, stderr: new RegExp(`${nowhere} does not answer`) })
})
