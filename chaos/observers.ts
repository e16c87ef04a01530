/**
 * Observers of the chaos run's elections: per election, one long poll (GET …/observe?after=&revision=
 * &wait=) and one event stream (the same with Accept: text/event-stream), each on a random replica and
 * on another one after a connection fails. Everything they are shown goes into the history, which
 * judges it (checkObservers): terms never go back, a leader whose term ended is not shown for long, and
 * each ends on the true final state.
 */
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { History, Observation } from '../harness/history.js'
import { request, type HttpResult } from '../harness/http.js'
import { EventStreamParser } from './event-stream-parser.js'
import type { Problem } from './clients.js'
import type { ServiceSettings } from './options.js'
import { stream as rngStream, type Rng } from './prng.js'

/** How long a long poll waits for a change, and an event stream stays open, before asking again. */
const POLL_WAIT_MS = 2_000
const STREAM_WAIT_MS = 5_000
const ALLOWED_503 = ['backend_unavailable', 'shutting_down']

export interface ObserverStats {
  observers: number
  /** answers (long polls) and events (streams) recorded */
  observations: number
  /** per way of observing, per status (or outcome) of each request */
  answers: { poll: Record<string, number>; stream: Record<string, number> }
  /** events per name, over every stream */
  events: Record<string, number>
  /** statuses no observer expects, 5xx other than 503 backend_unavailable / shutting_down, bodies it cannot read */
  unexpected: Problem[]
}

export interface ObserversOptions {
  seed: number
  keys: readonly string[]
  settings: ServiceSettings
  replicaUrl: (r: number) => string
  replicas: number
  history: History
  startedAt: number
  /** Aborted when the run has its final states: each observer stops, saying so to the history. */
  stop: AbortSignal
}

/** What an observe answer or event says: the term, and whether there is a leader (its revision: 0 without). */
interface Shown {
  term: number
  revision: number
  leader: boolean
}

export async function runObservers(o: ObserversOptions): Promise<ObserverStats> {
  const stats: ObserverStats = { observers: 0, observations: 0, answers: { poll: {}, stream: {} }, events: {}, unexpected: [] }
  const rel = (t: number) => t - o.startedAt
  const count = (way: 'poll' | 'stream', label: string) => (stats.answers[way][label] = (stats.answers[way][label] ?? 0) + 1)
  const unexpected = (at: number, replica: number, path: string, what: string) =>
    stats.unexpected.push({ at: rel(at), op: 'observe', path: `GET ${path}`, replica, what })

  /** Records what `observer` was shown, unless it came after the stop. */
  const record = (observer: string, key: string, event: Observation['event'], shown: Shown) => {
    if (o.stop.aborted) return
    stats.observations++
    o.history.observe({ key, observer, at: rel(performance.now()), event, term: shown.term, leader: shown.leader })
  }
  const stopped = (observer: string, key: string) =>
    new Promise<void>((resolve) => {
      const done = () => {
        o.history.observerStopped(observer, key, rel(performance.now()))
        resolve()
      }
      if (o.stop.aborted) done()
      else o.stop.addEventListener('abort', done, { once: true })
    })

  const poll = async (key: string) => {
    const observer = `poll-${key}`
    const rng = rngStream(o.seed, observer)
    const ended = stopped(observer, key)
    let seen: Shown | undefined
    while (!o.stop.aborted) {
      const replica = rng.int(0, o.replicas - 1)
      const query = seen ? `?after=${seen.term}&revision=${seen.revision}&wait=${POLL_WAIT_MS}ms` : ''
      const path = `/elections/${key}/observe${query}`
      const sentAt = performance.now()
      let res: HttpResult
      try {
        res = await request(o.replicaUrl(replica), 'GET', path, { timeoutMs: POLL_WAIT_MS + 3 * o.settings.nodeTimeoutMs + 5_000 })
      } catch (err) {
        count('poll', err instanceof Error && err.name === 'RequestTimeout' ? 'timeout' : 'connection-error')
        await pause(rng, o.stop)
        continue
      }
      count('poll', res.status === 503 && res.body.reason !== undefined ? `503 ${String(res.body.reason)}` : String(res.status))
      const shown = res.status === 200 ? shownOf(res.body) : undefined
      if (shown) {
        record(observer, key, 'state', shown)
        seen = shown
        continue
      }
      if (!expected(res)) unexpected(sentAt, replica, path, `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
      await pause(rng, o.stop)
    }
    await ended
  }

  const watchStream = async (key: string) => {
    const observer = `stream-${key}`
    const rng = rngStream(o.seed, observer)
    const ended = stopped(observer, key)
    let seen: Shown | undefined
    while (!o.stop.aborted) {
      const replica = rng.int(0, o.replicas - 1)
      const after = seen ? `after=${seen.term}&revision=${seen.revision}&` : ''
      const path = `/elections/${key}/observe?${after}wait=${STREAM_WAIT_MS}ms`
      const sentAt = performance.now()
      const outcome = await openStream(o.replicaUrl(replica), path, o.stop, STREAM_WAIT_MS + 3 * o.settings.nodeTimeoutMs + 5_000, (e) => {
        stats.events[e.event] = (stats.events[e.event] ?? 0) + 1
        const shown = shownOfEvent(e.event, e.data, seen)
        if (shown === undefined) {
          unexpected(sentAt, replica, path, `event ${e.event} ${e.data.slice(0, 200)}`)
          return
        }
        if (shown === null) return // an event that shows nothing new
        record(observer, key, e.event as Observation['event'], shown)
        seen = shown
      })
      count('stream', outcome.label)
      if (outcome.res && !expected(outcome.res))
        unexpected(sentAt, replica, path, `${outcome.res.status} ${JSON.stringify(outcome.res.body).slice(0, 300)}`)
      if (outcome.label !== '200') await pause(rng, o.stop)
    }
    await ended
  }

  const loops = o.keys.flatMap((key) => [poll(key), watchStream(key)])
  stats.observers = loops.length
  await Promise.all(loops)
  return stats
}

function expected(res: HttpResult): boolean {
  if (res.status === 503) return ALLOWED_503.includes(String(res.body.error))
  return res.status === 200 || res.status === 429
}

/** A short pause after a failure (interrupted by the stop). */
async function pause(rng: Rng, stop: AbortSignal): Promise<void> {
  await sleep(rng.int(50, 150), undefined, { signal: stop }).catch(() => undefined)
}

/** An observe answer's (or a resync's) state: { term, revision, leader }. */
function shownOf(body: Record<string, unknown>): Shown | undefined {
  const { term, revision, leader } = body
  if (typeof term !== 'number' || (leader !== null && typeof leader !== 'object')) return undefined
  return { term, revision: typeof revision === 'number' ? revision : 0, leader: leader !== null }
}

/**
 * What an event shows: elected and proclaimed a leader, vacant none, resync the state it carries.
 * null: nothing to record (a comment-like event); undefined: an event this suite does not understand.
 */
function shownOfEvent(event: string, data: string, seen: Shown | undefined): Shown | null | undefined {
  let body: Record<string, unknown>
  try {
    body = JSON.parse(data) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (body === null || typeof body !== 'object' || typeof body.term !== 'number') return undefined
  const revision = typeof body.revision === 'number' ? body.revision : (seen?.revision ?? 0)
  switch (event) {
    case 'elected':
    case 'proclaimed':
      return { term: body.term, revision, leader: true }
    case 'vacant':
      return { term: body.term, revision: 0, leader: false }
    case 'resync':
      return shownOf(body)
    default:
      return null
  }
}

/**
 * One event stream until it ends (the wait ran out), fails, or the stop: each event to `onEvent`.
 * Resolves to how it went (the status, or what happened instead), and the answer when it was not a stream.
 */
function openStream(
  baseUrl: string,
  path: string,
  stop: AbortSignal,
  timeoutMs: number,
  onEvent: (e: { event: string; data: string }) => void,
): Promise<{ label: string; res?: HttpResult }> {
  return new Promise((resolve) => {
    let settled = false
    const finish = (value: { label: string; res?: HttpResult }) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      stop.removeEventListener('abort', onStop)
      resolve(value)
    }
    const req = http.get(new URL(path, baseUrl), { headers: { accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8')
      const status = res.statusCode ?? 0
      if (!String(res.headers['content-type']).includes('text/event-stream')) {
        let text = ''
        res.on('data', (c: string) => (text += c))
        res.on('end', () => {
          let body: Record<string, unknown>
          try {
            body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
          } catch {
            body = { text: text.slice(0, 200) }
          }
          finish({
            label: status === 503 && body.reason !== undefined ? `503 ${String(body.reason)}` : String(status),
            res: { status, headers: res.headers, body },
          })
        })
        res.on('error', () => finish({ label: 'connection-error' }))
        return
      }
      const parser = new EventStreamParser()
      res.on('data', (c: string) => {
        for (const e of parser.push(c)) onEvent(e)
      })
      res.on('end', () => finish({ label: String(status) }))
      res.on('error', () => finish({ label: 'connection-error' }))
    })
    req.on('error', () => finish({ label: stop.aborted ? 'stopped' : 'connection-error' }))
    const timer = setTimeout(() => {
      finish({ label: 'timeout' })
      req.destroy()
    }, timeoutMs)
    const onStop = () => {
      finish({ label: 'stopped' })
      req.destroy()
    }
    stop.addEventListener('abort', onStop, { once: true })
  })
}
