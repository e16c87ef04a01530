/** A wire over a fetch the caller gives (e.g. one that records or routes requests). */
import type { Answer, Wire } from './wire-types.js'

export function fetchWire(fetcher: typeof fetch): Wire {
  return async (r) => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), r.timeoutMs)
    timer.unref()
    const finish = (): void => clearTimeout(timer)
    const signal = r.signal ? AbortSignal.any([controller.signal, r.signal]) : controller.signal
    const failure = (err: unknown): Error => {
      if (r.signal?.aborted) return r.aborted()
      return controller.signal.aborted ? r.timedOut() : r.unreachable(err)
    }
    let response: Response
    try {
      response = await fetcher(r.url, { method: r.method, headers: r.headers, body: r.body, signal })
    } catch (err) {
      finish()
      throw failure(err)
    }
    const answer: Answer = {
      status: response.status,
      header: (name) => response.headers.get(name) ?? undefined,
      async text() {
        try {
          return await response.text()
        } catch (err) {
          throw failure(err)
        } finally {
          finish()
        }
      },
      async *chunks() {
        try {
          if (response.body) for await (const chunk of response.body as AsyncIterable<Uint8Array>) yield chunk
        } catch (err) {
          throw failure(err)
        } finally {
          finish()
          void response.body?.cancel().catch(() => undefined)
        }
      },
    }
    return answer
  }
}
