/**
 * A real Redis Cluster on loopback for tests: `masters` masters with `replicasPerMaster` replicas
 * each (redis-server --cluster-enabled yes, joined by redis-cli --cluster create), with a small
 * cluster-node-timeout so that a killed master fails over within a few seconds. Resolves once every
 * node says cluster_state:ok, all 16384 slots are covered, and every master has its replicas in sync.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster } from 'ioredis'
import { startRedisCluster, tlsClientOptions, type RedisProcess, type RedisTls, type Teardown } from './redis-server.js'

const run = promisify(execFile)
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? 'redis-cli'

export interface RedisClusterProcesses {
  /** Every node, masters first (as created; a failover changes roles, see `roles`). */
  nodes: RedisProcess[]
  /** Seed URLs for REDIS_URLS (every node). */
  urls: string[]
  nodeTimeoutMs: number
  /** Each live node's role now, by port. */
  roles(): Promise<Map<number, 'master' | 'slave'>>
  /** The node serving `slot` as master now. */
  masterOf(slot: number): Promise<RedisProcess>
  /**
   * Move one slot to the master `to` by hand, as `redis-cli --cluster reshard` does: IMPORTING on the
   * target, MIGRATING on the source, MIGRATE of its keys in batches (until none is left: clients
   * keep creating keys meanwhile, and are sent on with ASK / TRYAGAIN), then SETSLOT NODE everywhere.
   */
  migrateSlot(slot: number, to: RedisProcess): Promise<void>
  /** A cluster client (the caller quits it). */
  client(): Cluster
  /**
   * Resolves once the cluster is healthy again: state ok, all slots served by live masters, and (by
   * default) every master with `replicasPerMaster` replicas in sync; `{ replicas: 0 }` after a kill.
   */
  waitHealthy(opts?: { withinMs?: number; replicas?: number }): Promise<void>
}

export async function startRedisClusterMode(
  opts: {
    t?: Teardown
    masters?: number
    replicasPerMaster?: number
    nodeTimeoutMs?: number
    /** Added to each node's environment (e.g. a clock shim's), by node index. */
    env?: (index: number) => Record<string, string> | undefined
    /** Every node speaks TLS only, to clients and to its peers (the cluster bus too). */
    tls?: RedisTls
  } = {},
): Promise<RedisClusterProcesses> {
  const masters = opts.masters ?? 3
  const replicas = opts.replicasPerMaster ?? 1
  const nodeTimeoutMs = opts.nodeTimeoutMs ?? 1000
  const nodes = await startRedisCluster(masters * (1 + replicas), {
    t: opts.t,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.tls ? { tls: opts.tls } : {}),
    args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(nodeTimeoutMs), '--cluster-replica-validity-factor', '0'],
  })
  const tls = opts.tls
  const cliTls = tls
    ? ['--tls', '--cacert', tls.caFile, ...(tls.clientCert ? ['--cert', tls.clientCert.certFile, '--key', tls.clientCert.keyFile] : [])]
    : []
  await run(
    REDIS_CLI,
    [...cliTls, '--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'],
    { timeout: 30_000 },
  )
  const live = () => nodes.filter((n) => n.alive)
  const info = async (node: RedisProcess, section: string): Promise<string> => {
    const c = node.client({ retryStrategy: () => null, maxRetriesPerRequest: 0, commandTimeout: 2000 })
    c.on('error', () => undefined)
    try {
      return await c.info(section)
    } finally {
      c.disconnect()
    }
  }
  const slotsOf = async (node: RedisProcess): Promise<[number, number, [string, number]][]> => {
    const c = node.client({ retryStrategy: () => null, maxRetriesPerRequest: 0, commandTimeout: 2000 })
    c.on('error', () => undefined)
    try {
      return (await c.cluster('SLOTS')) as unknown as [number, number, [string, number]][]
    } finally {
      c.disconnect()
    }
  }
  const cluster: RedisClusterProcesses = {
    nodes,
    urls: nodes.map((n) => n.url),
    nodeTimeoutMs,
    async roles() {
      const roles = new Map<number, 'master' | 'slave'>()
      for (const node of live()) {
        const role = /^role:(\w+)/m.exec(await info(node, 'replication').catch(() => ''))?.[1]
        if (role === 'master' || role === 'slave') roles.set(node.port, role)
      }
      return roles
    },
    async masterOf(slot) {
      for (const node of live()) {
        const ranges = await slotsOf(node).catch(() => [])
        const range = ranges.find(([from, to]) => slot >= from && slot <= to)
        const port = range?.[2][1]
        const owner = nodes.find((n) => n.port === port)
        if (owner) return owner
      }
      throw new Error(`no node serves slot ${slot}`)
    },
    async migrateSlot(slot, to) {
      const from = await cluster.masterOf(slot)
      if (from === to) return
      const open = (n: RedisProcess) => {
        const c = n.client({ maxRetriesPerRequest: 0, commandTimeout: 5000 })
        c.on('error', () => undefined)
        return c
      }
      const source = open(from)
      const target = open(to)
      try {
        const sourceId = (await source.cluster('MYID')) as string
        const targetId = (await target.cluster('MYID')) as string
        await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId)
        await source.cluster('SETSLOT', slot, 'MIGRATING', targetId)
        for (let round = 0; round < 1000; round++) {
          const keys = (await source.cluster('GETKEYSINSLOT', slot, 100)) as string[]
          if (keys.length === 0) break
          await source.call('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'REPLACE', 'KEYS', ...keys)
        }
        await target.cluster('SETSLOT', slot, 'NODE', targetId)
        await source.cluster('SETSLOT', slot, 'NODE', targetId)
        for (const node of live()) {
          if (node === from || node === to) continue
          const c = open(node)
          await c.cluster('SETSLOT', slot, 'NODE', targetId).catch(() => undefined)
          c.disconnect()
        }
      } finally {
        source.disconnect()
        target.disconnect()
      }
    },
    client() {
      return new Cluster(
        nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
        { redisOptions: { maxRetriesPerRequest: 1, ...(tls ? { tls: tlsClientOptions(tls) } : {}) } },
      )
    },
    async waitHealthy({ withinMs = 30_000, replicas: inSync = replicas } = {}) {
      const deadline = Date.now() + withinMs
      let last = ''
      while (Date.now() < deadline) {
        last = await healthProblem(inSync)
        if (last === '') return
        await sleep(100)
      }
      throw new Error(`the cluster did not become healthy within ${withinMs} ms: ${last}`)
    },
  }
  const healthProblem = async (inSync: number): Promise<string> => {
    const up = live()
    const livePorts = new Set(up.map((n) => n.port))
    for (const node of up) {
      const state = await info(node, 'cluster').catch(() => '')
      const clusterInfo = await (async () => {
        const c = node.client({ retryStrategy: () => null, maxRetriesPerRequest: 0, commandTimeout: 2000 })
        c.on('error', () => undefined)
        try {
          return (await c.cluster('INFO')) as string
        } catch {
          return ''
        } finally {
          c.disconnect()
        }
      })()
      if (!/^cluster_enabled:1/m.test(state)) return `${node.address} is not a cluster node`
      if (!/^cluster_state:ok/m.test(clusterInfo)) return `${node.address}: cluster_state is not ok`
      const ranges = await slotsOf(node).catch(() => [])
      const covered = ranges.reduce((n, [from, to, master]) => n + (livePorts.has(master[1]) ? to - from + 1 : 0), 0)
      if (covered !== 16384) return `${node.address} sees ${covered} of 16384 slots on live masters`
      if (ranges.some(([, , master]) => !livePorts.has(master[1]))) return `${node.address} still names a dead master`
    }
    for (const node of up) {
      const replication = await info(node, 'replication').catch(() => '')
      if (/^role:master/m.test(replication)) {
        const owns = (await slotsOf(node).catch(() => [])).some(([, , master]) => master[1] === node.port)
        if (!owns) continue
        const online = [...replication.matchAll(/^slave\d+:.*state=online/gm)].length
        if (online < inSync) return `master ${node.address} has ${online} replicas in sync`
      }
    }
    return ''
  }
  await cluster.waitHealthy()
  return cluster
}
