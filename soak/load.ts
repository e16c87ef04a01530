/**
 * The soak's load: operations started at a fixed rate (open loop: the schedule does not wait for
 * answers, so a slow service meets the same arrivals, not fewer), each a short story of 1–6 requests
 * drawn from a fixed mix — exclusive locks on a few hot keys (some waiting in line), locks on fresh
 * keys (the key churn: most released, some left to expire), read-write locks, a semaphore, sessions
 * kept alive with a hold bound to them, and watches (long poll and event stream) that must report the
 * hold's end. Every hold is recorded in the shared history checker (harness/history.ts) the way the
 * chaos clients record theirs: the window the client believed it held it, anchored on the acquire's
 * send time.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { openEventStream, type EventStream } from '../harness/event-stream.js'
import type { History } from '../harness/history.js'
import { request, type HttpResult } from '../harness/http.js'
import { stream, type Rng } from '../chaos/prng.js'

export type OpName = 'lock-hot' | 'lock-fresh' | 'rw' | 'semaphore' | 'session' | 'watch-poll' | 'watch-sse'

const MIX: readonly (readonly [number, OpName])[] = [
  [20, 'lock-hot'],
  [25, 'lock-fresh'],
  [15, 'rw'],
  [10, 'semaphore'],
  [10, 'session'],
  [10, 'watch-poll'],
  [10, 'watch-sse'],
]
const SEMAPHORE_LIMIT = 3
/** How long after its hold ended a watch may take to say so (expiry is timed by the replica, plus a loaded machine). */
const WATCH_SLACK_MS = 3_000
const REQUEST_SLACK_MS = 5_000

/** What happened in one sampling interval (drained by the sampler). */
export interface IntervalCounts {
  requests: number
  errors: number
  /** client-side latency of requests that did not wait in line, ms */
  latencies: number[]
}

export interface LoadTotals {
  started: Record<OpName, number>
  requests: number
  errors: number
  /** per status label (`200`, `409 lock_held`, `timeout`…) */
  statuses: Record<string, number>
  /** the first few errors, for the report */
  errorSamples: string[]
  /** operations not started because too many were still in flight (counted as errors) */
  skipped: number
  freshKeys: number
  maxInFlight: number
}

export interface LoadOptions {
  url: string
  seed: number
  /** operations started per second */
  rate: number
  durationMs: number
  hotKeys: number
  history: History
  /** performance.now() at the load's start: history times are relative to it */
  startedAt: number
  /** a prefix keeping two soaks' keys apart */
  prefix: string
}

const MAX_ERROR_SAMPLES = 20

export class Load {
  readonly totals: LoadTotals = {
    started: { 'lock-hot': 0, 'lock-fresh': 0, rw: 0, semaphore: 0, session: 0, 'watch-poll': 0, 'watch-sse': 0 },
    requests: 0,
    errors: 0,
    statuses: {},
    errorSamples: [],
    skipped: 0,
    freshKeys: 0,
    maxInFlight: 0,
  }
  #interval: IntervalCounts = { requests: 0, errors: 0, latencies: [] }
  #inFlight = 0
  #fresh = 0
  readonly #rng: Rng

  constructor(private readonly o: LoadOptions) {
    this.#rng = stream(o.seed, 'soak-schedule')
  }

  /** The counts since the last call. */
  drain(): IntervalCounts {
    const out = this.#interval
    this.#interval = { requests: 0, errors: 0, latencies: [] }
    return out
  }

  /** Starts operations on schedule until the duration ends, then waits for those in flight. */
  async run(): Promise<void> {
    const maxInFlight = Math.max(200, this.o.rate * 30)
    const running = new Set<Promise<void>>()
    const end = this.o.startedAt + this.o.durationMs
    for (let n = 0; ; n++) {
      const due = this.o.startedAt + (n * 1000) / this.o.rate
      if (due >= end) break
      const wait = due - performance.now()
      if (wait > 1) await sleep(wait)
      if (this.#inFlight >= maxInFlight) {
        this.totals.skipped++
        this.#error(`skipped: ${this.#inFlight} operations still in flight`)
        continue
      }
      const name = this.#rng.weighted(MIX)
      this.totals.started[name]++
      const op = this.#op(name, stream(this.o.seed, `op-${n}`), n)
      running.add(op)
      void op.finally(() => running.delete(op))
    }
    await Promise.all(running)
  }

  #error(what: string): void {
    this.totals.errors++
    this.#interval.errors++
    if (this.totals.errorSamples.length < MAX_ERROR_SAMPLES) {
      this.totals.errorSamples.push(`${((performance.now() - this.o.startedAt) / 1000).toFixed(1)}s ${what}`)
    }
  }

  async #op(name: OpName, rng: Rng, n: number): Promise<void> {
    this.#inFlight++
    this.totals.maxInFlight = Math.max(this.totals.maxInFlight, this.#inFlight)
    try {
      const hot = `${this.o.prefix}hot-${rng.int(0, this.o.hotKeys - 1)}`
      switch (name) {
        case 'lock-hot':
          return await this.#hold(rng, { namespace: 'locks', key: hot, mode: 'exclusive', path: `/locks/${hot}` }, `op${n}`)
        case 'lock-fresh':
          return await this.#hold(rng, this.#freshLock(), `op${n}`, { abandon: 0.2 })
        case 'rw': {
          const mode = rng.chance(0.7) ? 'read' : 'write'
          return await this.#hold(rng, { namespace: 'rwlocks', key: hot, mode, path: `/rwlocks/${hot}/${mode}` }, `op${n}`)
        }
        case 'semaphore': {
          const permits = rng.int(1, 2)
          const spec: Spec = { namespace: 'semaphores', key: hot, mode: 'permit', path: `/semaphores/${hot}`, permits }
          return await this.#hold(rng, spec, `op${n}`)
        }
        case 'session':
          return await this.#session(rng, rng.chance(0.5) ? this.#freshLock() : this.#hotLock(hot), `op${n}`)
        case 'watch-poll':
        case 'watch-sse':
          return await this.#watched(rng, name === 'watch-sse', `op${n}`)
      }
    } catch (err) {
      this.#error(`${name}: ${err instanceof Error ? err.message : String(err)}`)
    } finally {
      this.#inFlight--
    }
  }

  #freshLock(): Spec {
    const key = `${this.o.prefix}k-${this.#fresh++}`
    this.totals.freshKeys = this.#fresh
    return { namespace: 'locks', key, mode: 'exclusive', path: `/locks/${key}` }
  }

  #hotLock(key: string): Spec {
    return { namespace: 'locks', key, mode: 'exclusive', path: `/locks/${key}` }
  }

  /** One request; every answer is counted, and an unexpected one is an error. */
  async #call(method: string, path: string, o: { token?: string; body?: object; waitMs?: number; expect: readonly number[] }) {
    const sentAt = performance.now()
    let res: HttpResult | undefined
    let label: string
    try {
      res = await request(this.o.url, method, path, {
        ...(o.token ? { token: o.token } : {}),
        ...(o.body ? { body: o.body } : {}),
        timeoutMs: (o.waitMs ?? 0) + REQUEST_SLACK_MS,
      })
      label = res.body.error === undefined ? String(res.status) : `${res.status} ${String(res.body.error)}`
    } catch (err) {
      label = err instanceof Error && err.name === 'RequestTimeout' ? 'timeout' : 'connection-error'
    }
    const doneAt = performance.now()
    this.totals.requests++
    this.#interval.requests++
    this.totals.statuses[label] = (this.totals.statuses[label] ?? 0) + 1
    if (!o.waitMs) this.#interval.latencies.push(doneAt - sentAt)
    if (!res || !o.expect.includes(res.status)) this.#error(`${method} ${path.replace(/\?.*/, '')}: ${label}`)
    return { res, sentAt, doneAt }
  }

  /**
   * Acquire (sometimes waiting in line), maybe renew, hold a little, release — or, with `abandon`,
   * leave it to expire. Recorded in the history when granted.
   */
  async #hold(rng: Rng, spec: Spec, client: string, o: { abandon?: number } = {}): Promise<void> {
    const token = tokenOf(client)
    const ttlMs = rng.int(1_000, 3_000)
    const waitMs = rng.chance(0.3) ? rng.int(100, 1_500) : 0
    const query = [
      `ttl=${ttlMs}`,
      waitMs ? `wait=${waitMs}` : '',
      spec.permits ? `limit=${SEMAPHORE_LIMIT}&permits=${spec.permits}` : '',
    ].filter(Boolean)
    const acquire = await this.#call('POST', `${spec.path}?${query.join('&')}`, { token, waitMs, expect: [201, 409] })
    if (acquire.res?.status !== 201) return
    const grant = acquire.res.body
    const validityMs = grant.validityMs as number
    let end = acquire.sentAt + validityMs
    // Some holders renew once, a third of the way through what is left of their window.
    if (rng.chance(0.3) && performance.now() < end - 100) {
      await sleep(Math.max(0, (end - performance.now()) * 0.3))
      const renew = await this.#call('PUT', `${spec.path}/renew`, { token, body: { ttlMs }, expect: this.#heldUntil(end) })
      if (renew.res?.status === 200) end = Math.max(end, renew.sentAt + (renew.res.body.validityMs as number))
    }
    await sleep(rng.int(10, Math.max(10, Math.min(200, end - performance.now() - 50))))
    const abandoned = rng.chance(o.abandon ?? 0)
    const releaseAt = abandoned ? end : performance.now()
    if (!abandoned) await this.#call('DELETE', spec.path, { token, expect: this.#heldUntil(end) })
    this.#record(spec, client, grant, acquire.sentAt, acquire.doneAt, validityMs, Math.min(releaseAt, end))
  }

  /** What a renew or release may answer: 200 while the client believes it holds the lock; after that, also that it is gone. */
  #heldUntil(end: number): readonly number[] {
    return performance.now() < end ? [200] : [200, 404, 409]
  }

  #record(spec: Spec, client: string, grant: Record<string, unknown>, sentAt: number, doneAt: number, validityMs: number, end: number) {
    const rel = (t: number) => t - this.o.startedAt
    this.o.history.record({
      key: spec.key,
      namespace: spec.namespace,
      mode: spec.mode,
      ...(spec.mode === 'permit' ? { permits: spec.permits, limit: SEMAPHORE_LIMIT } : {}),
      client,
      fence: grant.fence as number,
      start: rel(doneAt),
      end: rel(end),
      requestStartedAt: rel(sentAt),
      validity: { from: rel(sentAt), ms: validityMs },
    })
  }

  /** A session with a hold bound to it, kept alive a few times, then closed (which releases the hold). */
  async #session(rng: Rng, spec: Spec, client: string): Promise<void> {
    const ttlMs = 1_500
    const opened = await this.#call('POST', '/sessions', { body: { ttlMs }, expect: [201] })
    if (opened.res?.status !== 201) return
    const id = opened.res.body.id as string
    const token = tokenOf(client)
    const acquire = await this.#call('POST', `${spec.path}?session=${id}`, { token, expect: [201, 409] })
    let end = acquire.sentAt + ((acquire.res?.body.validityMs as number | undefined) ?? 0)
    for (let i = rng.int(1, 3); i > 0; i--) {
      await sleep(ttlMs / 3)
      const kept = await this.#call('PUT', `/sessions/${id}/keepalive`, { expect: [200] })
      const validity = kept.res?.body.validityMs as number | undefined
      const bound = (kept.res?.body.holds as { key: string }[] | undefined)?.some((h) => h.key === spec.key)
      if (kept.res?.status === 200 && bound && validity !== undefined) end = Math.max(end, kept.sentAt + validity)
    }
    const closeSentAt = performance.now()
    await this.#call('DELETE', `/sessions/${id}`, { expect: [200] })
    if (acquire.res?.status === 201) {
      const validityMs = acquire.res.body.validityMs as number
      this.#record(spec, client, acquire.res.body, acquire.sentAt, acquire.doneAt, validityMs, Math.min(closeSentAt, end))
    }
  }

  /**
   * A hold on a fresh key watched (long poll or event stream) from the start: released after a while,
   * or left to expire; the watch must then say it is gone, with that reason, within WATCH_SLACK_MS.
   * An event stream's hold is released only once it said `held`; a long poll gives no such sign. A
   * watch the service took up only after the hold ended answers 404 (nothing to watch): not an error
   * when that answer came after the release was sent or the hold expired (a slow service), an error
   * before.
   */
  async #watched(rng: Rng, sse: boolean, client: string): Promise<void> {
    const spec = this.#freshLock()
    const token = tokenOf(client)
    const expire = rng.chance(0.3)
    const ttlMs = expire ? rng.int(1_000, 1_500) : 5_000
    const acquire = await this.#call('POST', `${spec.path}?ttl=${ttlMs}`, { token, expect: [201] })
    if (acquire.res?.status !== 201) return
    const waitMs = 10_000
    const watchPath = `${spec.path}/watch?wait=${waitMs}`
    const watching = sse ? this.#watchStream(watchPath, token, waitMs) : undefined
    const watch = watching?.answer ?? this.#call('GET', watchPath, { token, waitMs, expect: [200, 404] })
    await Promise.all([sleep(rng.int(50, 300)), watching?.held])
    let endedAt = acquire.sentAt + ttlMs
    if (!expire) {
      endedAt = performance.now()
      await this.#call('DELETE', spec.path, { token, expect: [200] })
    }
    const validityMs = acquire.res.body.validityMs as number
    this.#record(spec, client, acquire.res.body, acquire.sentAt, acquire.doneAt, validityMs, Math.min(endedAt, acquire.sentAt + validityMs))
    const seen = await watch
    const what = `GET ${spec.path}/watch${sse ? ' (event stream)' : ''}`
    const want = expire ? 'expired' : 'released'
    if (!seen.res) return // no answer: counted already
    const body = seen.res.body
    if (seen.res.status === 404) {
      if (seen.doneAt < endedAt) this.#error(`${what}: 404 ${String(body.error)} while the hold was live`)
    } else if (seen.res.status !== 200 || body.held !== false || body.reason !== want) {
      this.#error(`${what}: wanted ${want}, got ${seen.res.status} ${JSON.stringify(body).slice(0, 120)}`)
    } else if (seen.doneAt > endedAt + WATCH_SLACK_MS) {
      this.#error(`${what}: told ${want} ${(seen.doneAt - endedAt).toFixed(0)} ms late`)
    }
  }

  /**
   * An event-stream watch, counted like a request: resolves with its `lost` event's data as the body,
   * or a refusal's status (the stream is then a JSON answer, not events).
   */
  #watchStream(
    path: string,
    token: string,
    waitMs: number,
  ): { held: Promise<unknown>; answer: Promise<{ res?: HttpResult; doneAt: number }> } {
    const es = openEventStream(this.o.url, path, { 'lock-token': token })
    const held = es.next(1, waitMs).catch(() => undefined)
    return { held, answer: this.#streamAnswer(es, path, waitMs) }
  }

  async #streamAnswer(es: EventStream, path: string, waitMs: number): Promise<{ res?: HttpResult; doneAt: number }> {
    const timer = setTimeout(() => es.close(), waitMs + REQUEST_SLACK_MS)
    try {
      const status = await es.status
      await es.ended
      const lost = es.events.find((e) => e.event === 'lost')
      const doneAt = lost?.at ?? performance.now()
      this.totals.requests++
      this.#interval.requests++
      const label = status === 200 ? (lost ? 'sse lost' : 'sse without lost') : `sse ${status}`
      this.totals.statuses[label] = (this.totals.statuses[label] ?? 0) + 1
      if (status === 200 && lost) return { res: { status, headers: {}, body: lost.data }, doneAt }
      if (status === 404) return { res: { status, headers: {}, body: { error: 'lock_not_found' } }, doneAt }
      this.#error(`GET ${path.replace(/\?.*/, '')} (event stream): ${label}`)
      return { doneAt }
    } finally {
      clearTimeout(timer)
      es.close()
    }
  }
}

interface Spec {
  namespace: string
  key: string
  mode: 'exclusive' | 'read' | 'write' | 'permit'
  path: string
  permits?: number
}

let tokens = 0
/** A token unique in this process (16–128 of A-Z a-z 0-9 _ -). */
function tokenOf(client: string): string {
  return `soak-${client}-${tokens++}`.padEnd(24, 'x')
}
