import { performance } from 'node:perf_hooks'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Config } from '../config.js'
import { fail } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { errorSchema } from './schemas/errors.js'

/** A request rate: `perSecond` on average, up to `burst` at once after an idle spell. */
export interface Rate {
  perSecond: number
  burst: number
}

interface Bucket {
  tokens: number
  /** performance.now() when `tokens` was last brought up to date. */
  at: number
  rate: Rate
  /** Refusing since its last admitted request: the "rate limit reached" line is written once per spell. */
  refusing: boolean
}

/**
 * Token buckets, one per caller, in this process only: each replica admits its own `perSecond`, so N
 * replicas behind a load balancer admit up to N times it. A bucket that has filled up again is the
 * same as none, so `sweep` drops those (memory stays bounded by the callers of the last few seconds).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>()

  /** 0 when the request is admitted (and takes a token), else the ms until the bucket has one. */
  take(id: string, rate: Rate, now = performance.now()): { waitMs: number; firstRefusal: boolean } {
    let bucket = this.buckets.get(id)
    if (!bucket) this.buckets.set(id, (bucket = { tokens: rate.burst, at: now, rate, refusing: false }))
    else {
      bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.at) * rate.perSecond) / 1000)
      bucket.at = now
      bucket.rate = rate
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      bucket.refusing = false
      return { waitMs: 0, firstRefusal: false }
    }
    const firstRefusal = !bucket.refusing
    bucket.refusing = true
    return { waitMs: Math.max(1, Math.ceil(((1 - bucket.tokens) * 1000) / rate.perSecond)), firstRefusal }
  }

  /** Forgets the buckets that are full again. */
  sweep(now = performance.now()): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * b.rate.perSecond) / 1000 >= b.rate.burst) this.buckets.delete(id)
    }
  }

  get size(): number {
    return this.buckets.size
  }
}

/** Open streams per caller; `open` returns the slot's release (idempotent), or null when the caller has `max`. */
export class StreamCounts {
  private readonly counts = new Map<string, number>()
  total = 0

  open(id: string, max: number): (() => void) | null {
    const count = this.counts.get(id) ?? 0
    if (count >= max) return null
    this.counts.set(id, count + 1)
    this.total++
    let open = true
    return () => {
      if (!open) return
      open = false
      this.total--
      const left = (this.counts.get(id) ?? 1) - 1
      if (left === 0) this.counts.delete(id)
      else this.counts.set(id, left)
    }
  }

  of(id: string): number {
    return this.counts.get(id) ?? 0
  }
}

/** The routes that hold a request open for long: watches and observes (long polls and event streams). */
const STREAM_ROUTE = /\/(watch|observe)$/
const SWEEP_MS = 10_000
/** The metrics label of every client of an open service (an address would be an unbounded label). */
const OPEN = '(open)'

/** Who a limit counts against: the API key, or the client's address while the service runs open. */
function callerOf(request: FastifyRequest): { id: string; label: string; who: string } {
  const caller = request.caller
  if (caller) return { id: `key:${caller.name}`, label: caller.name, who: `the API key "${caller.name}"` }
  return { id: `ip:${request.ip}`, label: OPEN, who: `the client address ${request.ip}` }
}

/**
 * The abuse limits, after the API key check: a request rate per key (opt-in: RATE_LIMIT_PER_SECOND,
 * or a key's own `rateLimit` in AUTH_FILE), and MAX_STREAMS_PER_KEY watches and observes open at once.
 * Health, readiness, metrics and the contract (routes marked `access`) are never limited.
 */
export function installLimits(app: FastifyInstance, config: Config, metrics: Metrics): { limiter: RateLimiter; streams: StreamCounts } {
  const limiter = new RateLimiter()
  const streams = new StreamCounts()
  const rateOf = rates(config)

  if (rateOf.any) {
    const sweeper = setInterval(() => limiter.sweep(), SWEEP_MS).unref()
    app.addHook('onClose', (_app, done) => {
      clearInterval(sweeper)
      done()
    })
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.routeOptions.url === undefined || request.routeOptions.config.access !== undefined) return done()
      const rate = rateOf(request.caller?.name)
      if (!rate) return done()
      const caller = callerOf(request)
      const { waitMs, firstRefusal } = limiter.take(caller.id, rate)
      if (waitMs === 0) return done()
      metrics.rateLimited.inc({ key: caller.label })
      if (firstRefusal) {
        request.log.warn({ rateLimit: { key: caller.label, address: request.ip, ...rate } }, 'rate limit reached: refusing requests 429')
      }
      done(fail.rateLimited(caller.who, rate.perSecond, rate.burst, waitMs))
    })
  }

  const openStream: onRequestHookHandler = (request, reply, done) => {
    const caller = callerOf(request)
    const release = streams.open(caller.id, config.maxStreamsPerKey)
    if (!release) {
      metrics.streamsRefused.inc({ key: caller.label })
      return done(fail.tooManyStreams(caller.who, config.maxStreamsPerKey))
    }
    metrics.streams.set(streams.total)
    const end = () => {
      release()
      metrics.streams.set(streams.total)
    }
    // 'close' comes when the answer is sent and when the client hangs up first (event streams included).
    reply.raw.once('close', end)
    done()
  }

  app.addHook('onRoute', (route) => {
    // Every limited route may answer 429 rate_limited: its contract says so.
    const response = route.schema?.response as object | undefined
    if (route.config?.access === undefined && response) route.schema = { ...route.schema, response: { ...response, 429: errorSchema } }
    if (STREAM_ROUTE.test(route.url)) route.onRequest = [...[route.onRequest ?? []].flat(), openStream]
  })
  return { limiter, streams }
}

/** The rate of each API key (its own, else the default), or of every client while the service runs open. */
function rates(config: Config): ((name: string | undefined) => Rate | null) & { any: boolean } {
  const rateOf = (perSecond: number, burst: number | null | undefined): Rate | null =>
    perSecond > 0 ? { perSecond, burst: burst ?? Math.max(1, perSecond) } : null
  const fallback = rateOf(config.rateLimitPerSecond, config.rateLimitBurst)
  const own = new Map<string, Rate | null>()
  for (const key of config.auth?.keys ?? []) if (key.rateLimit) own.set(key.name, rateOf(key.rateLimit.perSecond, key.rateLimit.burst))
  const lookup = (name: string | undefined) => (name === undefined ? fallback : own.has(name) ? (own.get(name) ?? null) : fallback)
  return Object.assign(lookup, { any: fallback !== null || [...own.values()].some((r) => r !== null) })
}
