/** A watch as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out). */
import { errorFromAnswer, LockServiceError, UnreachableError } from './errors.js'
import type { Transport } from './transport.js'
import { checkMs } from './validate.js'
import type { ServiceLossReason, WatchEvent } from './wire.js'
import type { WatchOptions } from './operations.js'

export async function* watchEvents(
  transport: Transport,
  path: string,
  token: string | undefined,
  o: WatchOptions,
): AsyncGenerator<WatchEvent> {
  const waitMs = o.waitMs === undefined ? undefined : checkMs(o.waitMs, 'waitMs', 0)
  const response = await transport.send({
    method: 'GET',
    path,
    token,
    accept: 'text/event-stream',
    query: { wait: waitMs === undefined ? undefined : `${waitMs}ms` },
    timeoutMs: (waitMs ?? 30_000) + transport.timeoutMs,
    signal: o.signal,
  })
  const requestId = response.headers.get('x-request-id') ?? undefined
  if (response.status !== 200 || !response.body) {
    const text = await response.text().catch(() => '')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    throw errorFromAnswer(response.status, body, requestId, response.headers.get('retry-after'))
  }
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = parse(block)
        if (!event) continue
        if (event.name === 'error') throw errorFromAnswer(0, event.data, requestId, null) // an error after the stream began
        if (event.name === 'held') yield { held: true, remainingMs: Number(event.data.remainingMs ?? 0) }
        if (event.name === 'lost') {
          yield { held: false, reason: event.data.reason as ServiceLossReason, at: new Date(String(event.data.at)) }
          return
        }
      }
    }
  } catch (err) {
    if (o.signal?.aborted) throw o.signal.reason
    if (err instanceof LockServiceError) throw err
    throw new UnreachableError(`the event stream from the lock service at ${transport.base} broke`, { cause: err })
  }
}

function parse(block: string): { name: string; data: Record<string, unknown> } | undefined {
  let name = 'message'
  let data = ''
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim()
    else if (line.startsWith('data:')) data += line.slice(5).trim()
  }
  if (data === '') return undefined
  try {
    return { name, data: JSON.parse(data) as Record<string, unknown> }
  } catch {
    return undefined
  }
}
