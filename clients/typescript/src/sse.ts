/** Server-Sent Events: a watch (`held` events, then one `lost`) and an election's observe stream. */
import { errorFromAnswer, LockServiceError, UnreachableError } from './errors.js'
import type { Exchange, Transport } from './transport.js'
import { checkMs } from './validate.js'
import type { ServiceLossReason, WatchEvent } from './wire.js'
import type { WatchOptions } from './operations.js'

/** One event: its `event:` name, its `id:` (if any) and its `data:` as JSON. */
export interface ServerEvent {
  name: string
  id: string | undefined
  data: Record<string, unknown>
}

/** The events of a stream, until it ends; an error answer (before the stream) or an `error` event throws the typed error. */
export async function* serverEvents(transport: Transport, x: Exchange): AsyncGenerator<ServerEvent> {
  const answer = await transport.send({ ...x, accept: 'text/event-stream' })
  const requestId = answer.header('x-request-id')
  if (answer.status !== 200) {
    const text = await answer.text().catch(() => '')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    throw errorFromAnswer(answer.status, body, requestId, answer.header('retry-after') ?? null)
  }
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of answer.chunks()) {
      buffer += decoder.decode(chunk, { stream: true })
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = parse(buffer.slice(0, end))
        buffer = buffer.slice(end + 2)
        if (!event) continue
        if (event.name === 'error') throw errorFromAnswer(0, event.data, requestId, null) // an error after the stream began
        yield event
      }
    }
  } catch (err) {
    if (x.signal?.aborted) throw x.signal.reason
    if (err instanceof LockServiceError) throw err
    throw new UnreachableError(`the event stream from the lock service at ${transport.base} broke`, { cause: err })
  }
}

function parse(block: string): ServerEvent | undefined {
  let name = 'message'
  let id: string | undefined
  let data = ''
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim()
    else if (line.startsWith('id:')) id = line.slice(3).trim()
    else if (line.startsWith('data:')) data += line.slice(5).trim()
  }
  if (data === '') return undefined
  try {
    return { name, id, data: JSON.parse(data) as Record<string, unknown> }
  } catch {
    return undefined
  }
}

/** A watch as an event stream: `held` events (after renewals), then one `lost` event; ends when the wait runs out. */
export async function* watchEvents(
  transport: Transport,
  path: string,
  token: string | undefined,
  o: WatchOptions,
): AsyncGenerator<WatchEvent> {
  const waitMs = o.waitMs === undefined ? undefined : checkMs(o.waitMs, 'waitMs', 0)
  const events = serverEvents(transport, {
    method: 'GET',
    path,
    token,
    query: { wait: waitMs === undefined ? undefined : `${waitMs}ms` },
    timeoutMs: (waitMs ?? 30_000) + transport.timeoutMs,
    signal: o.signal,
  })
  for await (const event of events) {
    if (event.name === 'held') yield { held: true, remainingMs: Number(event.data.remainingMs ?? 0) }
    if (event.name === 'lost') {
      yield { held: false, reason: event.data.reason as ServiceLossReason, at: new Date(String(event.data.at)) }
      return
    }
  }
}
