/** Command-line options of `npm run soak`. */
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { parseDuration } from '../src/contract/duration.js'
import { DEFAULT_BOUNDS, type Bounds } from './report.js'

export interface Options {
  durationMs: number
  /** topologies to soak, at the same time: 1 redis-server, and/or a quorum of 3 */
  nodes: (1 | 3)[]
  /** operations started per second, per topology */
  rate: number
  seed: number
  hotKeys: number
  sampleMs: number
  out: string
  bounds: Bounds
  /** FENCE_RETENTION_MS for the service (see fenceRetentionFor) */
  fenceRetentionMs: number
}

export class UsageError extends Error {}

export const USAGE = `npm run soak -- [options]

  --duration D          how long the load runs, e.g. 60s, 30m (default 60s)
  --nodes 1|3           one topology only (default: both at once, each with its own service and load)
  --rate N              operations started per second per topology, 1-2000 (default 40; about 2.5 requests each)
  --seed N              the load's choices (default 1)
  --hot-keys K          hot keys per kind, 1-50 (default 4)
  --sample D            sampling interval (default: duration / 300, within 1s-5s)
  --out DIR             where the report goes (default: a new temp directory, printed)
  --max-lag-ms N        bound on each interval's event-loop delay p99 (default ${DEFAULT_BOUNDS.eventLoopP99Ms})
  --max-error-rate X    bound on errors / requests (default ${DEFAULT_BOUNDS.errorRate})
  --max-growth X        growth allowed after warm-up, a share of the median (default ${DEFAULT_BOUNDS.rss.relative})
  --warmup X            share of the run before the growth checks look (default ${DEFAULT_BOUNDS.warmupShare})
`

function number(name: string, text: string | undefined, def: number, min: number, max: number): number {
  if (text === undefined) return def
  const n = Number(text)
  if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new UsageError(`--${name} must be a number from ${min} to ${max} (got ${text})`)
  return n
}

function duration(name: string, text: string | undefined, def: number, min: number): number {
  if (text === undefined) return def
  const ms = parseDuration(text)
  if (ms === undefined || ms < min)
    throw new UsageError(`--${name} must be a duration of at least ${min} ms, e.g. 60s or 30m (got ${text})`)
  return ms
}

/**
 * A fence counter outlives its key's last grant by FENCE_RETENTION_MS (an hour by default), so fresh
 * keys grow Redis for that long before it levels off: a tenth of the run (5 s to 10 min) puts the
 * plateau well inside the warm-up, and the growth check then sees what outlives it.
 */
export function fenceRetentionFor(durationMs: number): number {
  return Math.min(600_000, Math.max(5_000, Math.round(durationMs / 10)))
}

export function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      duration: { type: 'string' },
      nodes: { type: 'string' },
      rate: { type: 'string' },
      seed: { type: 'string' },
      'hot-keys': { type: 'string' },
      sample: { type: 'string' },
      out: { type: 'string' },
      'max-lag-ms': { type: 'string' },
      'max-error-rate': { type: 'string' },
      'max-growth': { type: 'string' },
      warmup: { type: 'string' },
      help: { type: 'boolean' },
    },
  })
  if (values.help) throw new UsageError('')
  const durationMs = duration('duration', values.duration, 60_000, 10_000)
  if (values.nodes !== undefined && values.nodes !== '1' && values.nodes !== '3')
    throw new UsageError(`--nodes must be 1 or 3 (got ${values.nodes})`)
  const growth = number('max-growth', values['max-growth'], DEFAULT_BOUNDS.rss.relative, 0, 10)
  const bounds: Bounds = {
    rss: { ...DEFAULT_BOUNDS.rss, relative: growth },
    heap: { ...DEFAULT_BOUNDS.heap, relative: growth },
    redisMemory: { ...DEFAULT_BOUNDS.redisMemory, relative: growth },
    redisKeys: { ...DEFAULT_BOUNDS.redisKeys, relative: growth },
    eventLoopP99Ms: number('max-lag-ms', values['max-lag-ms'], DEFAULT_BOUNDS.eventLoopP99Ms, 1, 60_000),
    errorRate: number('max-error-rate', values['max-error-rate'], DEFAULT_BOUNDS.errorRate, 0, 1),
    warmupShare: number('warmup', values.warmup, DEFAULT_BOUNDS.warmupShare, 0, 0.9),
  }
  return {
    durationMs,
    nodes: values.nodes === undefined ? [1, 3] : [Number(values.nodes) as 1 | 3],
    rate: number('rate', values.rate, 40, 1, 2000),
    seed: Math.floor(number('seed', values.seed, 1, 0, 2 ** 32 - 1)),
    hotKeys: Math.floor(number('hot-keys', values['hot-keys'], 4, 1, 50)),
    sampleMs: duration('sample', values.sample, Math.min(5_000, Math.max(1_000, Math.round(durationMs / 300))), 200),
    out: values.out ?? path.join(os.tmpdir(), `soak-${new Date().toISOString().replace(/[:.]/g, '-')}`),
    bounds,
    fenceRetentionMs: fenceRetentionFor(durationMs),
  }
}
