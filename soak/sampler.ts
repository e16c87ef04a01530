/**
 * Every few seconds: what the service's /metrics says of its process (prom-client's default metrics:
 * RSS, heap used, event-loop delay p99 since the previous scrape, active handles and resources), each
 * Redis node's `used_memory` and key count, and the load's request and error rate over the interval.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { RedisProcess } from '../harness/redis-server.js'
import type { Load } from './load.js'
import { quantile } from './trend.js'

export interface Sample {
  /** seconds since the load began */
  t: number
  rssBytes: number
  heapUsedBytes: number
  /** the event-loop delay p99 over the interval (prom-client resets its histogram at each scrape) */
  eventLoopP99Ms: number
  activeHandles: number
  activeResources: number
  /** per Redis node, in REDIS_URLS order */
  redisUsedMemory: number[]
  redisKeys: number[]
  requestsPerSecond: number
  errorsPerSecond: number
  /** client-side p99 of the interval's requests that did not wait in line, ms */
  latencyP99Ms: number
}

/** The value of an unlabelled sample line `name value` in Prometheus text (NaN when absent). */
export function metricValue(text: string, name: string): number {
  const match = new RegExp(`^${name} ([^\\s]+)`, 'm').exec(text)
  return match ? Number(match[1]) : NaN
}

export class Sampler {
  readonly samples: Sample[] = []
  #stopped = false
  #last = 0

  constructor(
    private readonly o: {
      url: string
      redis: readonly RedisProcess[]
      load: Load
      startedAt: number
      everyMs: number
      /** no sample after this (the load's schedule ends then; what follows is its last answers trickling in) */
      durationMs: number
    },
  ) {}

  /** Samples until stop() or the end of the duration; the first sample one interval after the start. */
  async run(): Promise<void> {
    this.#last = performance.now()
    const clients = this.o.redis.map((r) => r.client({ lazyConnect: false, maxRetriesPerRequest: 1 }))
    try {
      for (let n = 1; !this.#stopped && n * this.o.everyMs <= this.o.durationMs; n++) {
        await sleep(Math.max(0, this.o.startedAt + n * this.o.everyMs - performance.now()))
        if (this.#stopped) break
        this.samples.push(await this.#sample(clients))
      }
    } finally {
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())))
    }
  }

  stop(): void {
    this.#stopped = true
  }

  async #sample(clients: ReturnType<RedisProcess['client']>[]): Promise<Sample> {
    const now = performance.now()
    const seconds = (now - this.#last) / 1000
    this.#last = now
    const counts = this.o.load.drain()
    const [metrics, redis] = await Promise.all([
      fetch(`${this.o.url}/metrics`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.text())
        .catch(() => ''),
      Promise.all(
        clients.map(async (c) => {
          const [info, keys] = await Promise.all([c.info('memory'), c.dbsize()]).catch(() => ['', NaN] as const)
          return { usedMemory: metricValue(String(info).replace(/:/g, ' '), 'used_memory'), keys: Number(keys) }
        }),
      ),
    ])
    return {
      t: (now - this.o.startedAt) / 1000,
      rssBytes: metricValue(metrics, 'process_resident_memory_bytes'),
      heapUsedBytes: metricValue(metrics, 'nodejs_heap_size_used_bytes'),
      eventLoopP99Ms: metricValue(metrics, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      activeHandles: metricValue(metrics, 'nodejs_active_handles_total'),
      activeResources: metricValue(metrics, 'nodejs_active_resources_total'),
      redisUsedMemory: redis.map((r) => r.usedMemory),
      redisKeys: redis.map((r) => r.keys),
      requestsPerSecond: counts.requests / seconds,
      errorsPerSecond: counts.errors / seconds,
      latencyP99Ms: quantile(counts.latencies, 0.99),
    }
  }
}
