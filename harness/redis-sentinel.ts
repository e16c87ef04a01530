/**
 * A primary, its replicas and three sentinels (`redis-server <conf> --sentinel`) on loopback, for
 * tests of REDIS_MODE=sentinel. Sentinels notice a dead primary after `downAfterMs` and promote a
 * replica. Every process is killed at teardown and when the test process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { SentinelConfig } from '../src/config.js'
import { freePort, startRedis, tlsClientOptions, type RedisProcess, type RedisTls, type Teardown } from './redis-server.js'

export const SENTINEL_NAME = 'locks'

export interface SentinelSet {
  primary: RedisProcess
  replicas: RedisProcess[]
  /** "127.0.0.1:port" of each sentinel */
  sentinels: string[]
  /** The `sentinel` part of a Config for these sentinels. */
  config: SentinelConfig
  /** The environment a service process needs. */
  env: Record<string, string>
  /** The data node the sentinels name as primary now. */
  currentPrimary(): Promise<RedisProcess>
  /** Resolves once the sentinels name a live primary with `replicas` replicas in sync. */
  waitHealthy(opts?: { withinMs?: number; replicas?: number }): Promise<void>
}

const live = new Set<ChildProcess>()
let hooked = false

/** `tls`: every data node and sentinel speaks TLS only (and the sentinels to the data nodes). */
export async function startSentinelSet(opts: {
  t: Teardown
  replicas?: number
  downAfterMs?: number
  tls?: RedisTls
}): Promise<SentinelSet> {
  const replicaCount = opts.replicas ?? 1
  const downAfterMs = opts.downAfterMs ?? 1000
  const tls = opts.tls
  const withTls = tls ? { tls } : {}
  const primary = await startRedis({ t: opts.t, ...withTls })
  const replicas = await Promise.all(
    Array.from({ length: replicaCount }, () =>
      startRedis({ t: opts.t, args: ['--replicaof', '127.0.0.1', String(primary.port)], ...withTls }),
    ),
  )
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-sentinel-'))
  const ports = await Promise.all([freePort(), freePort(), freePort()])
  const children = await Promise.all(
    ports.map(async (port) => {
      const conf = path.join(dir, `sentinel-${port}.conf`)
      await writeFile(
        conf,
        [
          ...(tls
            ? [
                'port 0',
                `tls-port ${port}`,
                `tls-cert-file ${tls.certFile}`,
                `tls-key-file ${tls.keyFile}`,
                `tls-ca-cert-file ${tls.caFile}`,
                `tls-auth-clients ${tls.authClients ?? 'no'}`,
                'tls-replication yes',
              ]
            : [`port ${port}`]),
          'bind 127.0.0.1',
          'protected-mode no',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} ${downAfterMs}`,
          `sentinel failover-timeout ${SENTINEL_NAME} 10000`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      )
      const child = spawn(process.env.REDIS_SERVER_BIN ?? 'redis-server', [conf, '--sentinel', '--loglevel', 'warning'], {
        stdio: ['ignore', 'ignore', 'ignore'],
      })
      child.unref()
      live.add(child)
      child.once('exit', () => live.delete(child))
      return child
    }),
  )
  if (!hooked) {
    hooked = true
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL')
    })
  }
  opts.t.teardown(async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve()
            // Unreferenced children do not keep the loop alive: hold it until the exit is seen.
            c.ref()
            c.once('exit', () => resolve())
            c.kill('SIGKILL')
          }),
      ),
    )
    await rm(dir, { recursive: true, force: true })
  })
  const sentinels = ports.map((p) => `127.0.0.1:${p}`)
  const nodes = [primary, ...replicas]
  const ask = async <T>(port: number, command: (r: Redis) => Promise<T>): Promise<T | undefined> => {
    const r = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
      ...(tls ? { tls: tlsClientOptions(tls) } : {}),
    })
    r.on('error', () => undefined)
    try {
      await r.connect()
      return await command(r)
    } catch {
      return undefined
    } finally {
      r.disconnect()
    }
  }
  const set: SentinelSet = {
    primary,
    replicas,
    sentinels,
    config: Object.freeze({
      sentinels: ports.map((port) => ({ host: '127.0.0.1', port })),
      name: SENTINEL_NAME,
      password: undefined,
      sentinelPassword: undefined,
      tls: tls !== undefined,
    }),
    env: {
      REDIS_MODE: 'sentinel',
      REDIS_SENTINELS: sentinels.map((s) => (tls ? `rediss://${s}` : s)).join(','),
      REDIS_SENTINEL_NAME: SENTINEL_NAME,
    },
    async currentPrimary() {
      for (const port of ports) {
        const addr = (await ask(port, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME))) as [string, string] | undefined
        const node = nodes.find((n) => n.alive && String(n.port) === addr?.[1])
        if (node) return node
      }
      throw new Error('no sentinel names a live primary')
    },
    async waitHealthy({ withinMs = 20_000, replicas: inSync = replicaCount } = {}) {
      const deadline = Date.now() + withinMs
      let problem = ''
      while (Date.now() < deadline) {
        problem = await (async () => {
          const monitoring = await Promise.all(ports.map((port) => ask(port, (r) => r.call('SENTINEL', 'MASTER', SENTINEL_NAME))))
          if (monitoring.some((k) => k === undefined)) return 'a sentinel does not answer yet'
          const primaryNow = await set.currentPrimary().catch(() => undefined)
          if (!primaryNow) return 'no live primary'
          const info = await ask(primaryNow.port, (r) => r.info('replication'))
          if (!info || !/^role:master/m.test(info)) return `${primaryNow.address} is not a master yet`
          const online = [...info.matchAll(/^slave\d+:.*state=online/gm)].length
          if (online < inSync) return `${online} replicas in sync`
          // Every sentinel must know the others (quorum for a failover) and every replica (a replica
          // a sentinel has not discovered yet would not be moved over to the promoted primary).
          const known = await Promise.all(ports.map((port) => ask(port, (r) => r.call('SENTINEL', 'REPLICAS', SENTINEL_NAME))))
          if (known.some((k) => !Array.isArray(k) || k.length < inSync)) return 'the sentinels have not discovered every replica yet'
          // Every sentinel must know the others (quorum for a failover).
          const peers = await Promise.all(ports.map((port) => ask(port, (r) => r.call('SENTINEL', 'SENTINELS', SENTINEL_NAME))))
          if (peers.some((p) => !Array.isArray(p) || p.length < 2)) return 'the sentinels have not found each other yet'
          return ''
        })()
        if (problem === '') return
        await sleep(100)
      }
      throw new Error(`the sentinel set did not become healthy within ${withinMs} ms: ${problem}`)
    },
  }
  await set.waitHealthy()
  return set
}
