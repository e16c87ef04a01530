import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { readRecords } from './records.js'

/** One Server-Sent Event as received: its name, id, data (parsed JSON), and when it arrived (performance.now()). */
export interface ReceivedEvent {
  event: string
  id: string
  data: Record<string, unknown>
  at: number
}

/**
 * An event stream (GET with Accept: text/event-stream) read as it comes: `events` grows; `next(n)`
 * waits for the n-th event (1-based); `close()` hangs up. `status` is the answer's status.
 */
export interface EventStream {
  status: Promise<number>
  events: ReceivedEvent[]
  next(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>
  ended: Promise<void>
  close(): void
}

export function openEventStream(baseUrl: string, path: string, headers: Record<string, string> = {}): EventStream {
  const events: ReceivedEvent[] = []
  const waiting = new Set<() => void>()
  let resolveStatus: (s: number) => void = () => undefined
  let resolveEnded: () => void = () => undefined
  const status = new Promise<number>((r) => (resolveStatus = r))
  const ended = new Promise<void>((r) => (resolveEnded = r))
  const req = http.get(new URL(path, baseUrl), { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
    resolveStatus(res.statusCode ?? 0)
    readRecords(res, '\n\n', (block) => {
      const fields = new Map<string, string>()
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue
        const colon = line.indexOf(': ')
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2))
      }
      const event = fields.get('event')
      if (!event) return
      events.push({
        event,
        id: fields.get('id') ?? '',
        data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown>,
        at: performance.now(),
      })
      for (const wake of [...waiting]) wake()
    })
    res.on('end', () => {
      resolveEnded()
      for (const wake of [...waiting]) wake()
    })
    res.on('error', () => resolveEnded())
  })
  req.on('error', () => {
    resolveStatus(0)
    resolveEnded()
  })
  let done = false
  void ended.then(() => (done = true))
  return {
    status,
    events,
    ended,
    close: () => req.destroy(),
    next: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (events.length >= count) {
            cleanup()
            resolve(events.slice(0, count))
          } else if (done) {
            cleanup()
            reject(new Error(`the stream ended after ${events.length} events: ${JSON.stringify(events.map((e) => e.event))}`))
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`${count} events not seen within ${timeoutMs} ms: ${JSON.stringify(events.map((e) => [e.event, e.data]))}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          waiting.delete(check)
        }
        waiting.add(check)
        check()
      }),
  }
}
