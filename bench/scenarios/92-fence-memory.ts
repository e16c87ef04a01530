/**
 * What a distinct key leaves in Redis once it has been acquired and released: its fence counter, kept
 * FENCE_RETENTION_MS after its last grant. Before: 7 days (the fixed FENCE_MEMORY_MS this setting
 * replaced); after: the default, 1 h; and 5 s, to time how long the residue really stays (the retention
 * plus Redis' active expiry, which samples keys with a TTL ten times a second).
 *
 * For each: a fresh service on an emptied Redis; KEYS distinct locks acquired and released (16 at a
 * time); then used_memory's growth per key, the keys left per key, and their TTL. Not a throughput run.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { HttpServer } from '../lib/processes.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtNumber, round } from '../lib/stats.js'

const KEYS = 10_000
const PARALLEL = 16
const SHORT_MS = 5000
const variants = [
  { name: 'before: 7 days (FENCE_MEMORY_MS)', retentionMs: 7 * 86_400_000 },
  { name: 'after: 1 h (FENCE_RETENTION_MS default)', retentionMs: 3_600_000 },
  { name: `FENCE_RETENTION_MS=${SHORT_MS}`, retentionMs: SHORT_MS },
] as const

async function acquireAndRelease(server: HttpServer, key: string): Promise<void> {
  const base = `http://${server.host}:${server.port}/locks/${key}`
  const grant = await fetch(`${base}?ttl=30s`, { method: 'POST' })
  if (grant.status !== 201) throw new Error(`acquire ${key}: ${grant.status} ${await grant.text()}`)
  const { token } = (await grant.json()) as { token: string }
  const release = await fetch(base, { method: 'DELETE', headers: { 'lock-token': token } })
  if (release.status !== 200) throw new Error(`release ${key}: ${release.status} ${await release.text()}`)
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1])
}

const scenario: Scenario = {
  id: 'fence-memory',
  title: 'Redis memory per distinct key acquired and released, and how long it stays',
  description:
    `${fmtNumber(KEYS)} distinct locks acquired and released (${PARALLEL} at a time) on a fresh service and an emptied Redis, ` +
    'per FENCE_RETENTION_MS: used_memory growth per key, Redis keys left per key, their TTL; with a 5 s retention, ' +
    'the time from the last release until Redis holds no key (retention + active expiry).',
  async run(ctx) {
    const rows: string[][] = []
    const figures: Record<string, unknown> = {}
    for (const variant of variants) {
      const server = await ctx.startService({
        nodes: 1,
        name: `fence-memory-${variant.retentionMs}`,
        env: { FENCE_RETENTION_MS: String(variant.retentionMs) },
      })
      const redis = new Redis(server.redis[0]!.url)
      try {
        await Promise.all(server.redis.map((r) => r.flush()))
        const before = await usedMemory(redis)
        const runId = Date.now().toString(36)
        let next = 0
        await Promise.all(
          Array.from({ length: PARALLEL }, async () => {
            while (next < KEYS) await acquireAndRelease(server, `job:${runId}:${next++}`)
          }),
        )
        const releasedAt = performance.now()
        const left = await redis.dbsize()
        const grownBytes = (await usedMemory(redis)) - before
        const sample = await redis.pttl(`lock-service:lock:{job:${runId}:0}:fence`)
        let residueMs: number | null = null
        if (variant.retentionMs === SHORT_MS) {
          while ((await redis.dbsize()) > 0 && performance.now() - releasedAt < SHORT_MS * 4) await sleep(50)
          residueMs = performance.now() - releasedAt
        }
        const bytesPerKey = grownBytes / KEYS
        rows.push([
          variant.name,
          fmtNumber(left / KEYS),
          fmtNumber(bytesPerKey),
          `${fmtNumber(sample / 1000)} s`,
          residueMs === null ? '—' : `${fmtNumber(residueMs)} ms`,
          `${fmtNumber((bytesPerKey * 1000 * variant.retentionMs) / 1000 / 2 ** 20)} MiB`,
        ])
        figures[variant.name] = {
          retentionMs: variant.retentionMs,
          keysLeftPerKey: round(left / KEYS),
          usedMemoryBytesPerKey: round(bytesPerKey),
          counterPttlMs: sample,
          residueMs: residueMs === null ? null : round(residueMs),
        }
      } finally {
        redis.disconnect()
        await server.proc.stop()
      }
    }
    return {
      columns: [
        'retention',
        'Redis keys left per key',
        'used_memory bytes per key',
        'counter TTL after the run',
        'gone after',
        'at 1,000 new keys/s',
      ],
      rows,
      figures,
      notes: ['"at 1,000 new keys/s": the steady-state memory of a job-per-key workload (bytes per key × 1,000/s × retention).'],
    }
  },
}

export default scenario
