/** One HTTP exchange with the service: headers, timeouts, and typed errors for every failure. */
import { errorFromAnswer, InvalidArgumentError, LockServiceError, TimeoutError, UnreachableError } from './errors.js'
import { fetchWire } from './wire-fetch.js'
import { nodeWire } from './wire-node.js'
import type { Answer, TlsOptions, Wire } from './wire-types.js'

export type { Answer, TlsOptions } from './wire-types.js'

/** How a {@link Client} reaches the service. */
export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080` or `https://locks.internal:8443`. */
  url: string
  /** An API key, sent as `Authorization: Bearer <key>` (never logged, never in an error). */
  apiKey?: string
  /** Per-request timeout in ms (default 10 000). A waiting acquire gets its wait on top. */
  timeoutMs?: number
  /** A User-Agent header. */
  userAgent?: string
  /** For an https:// URL: a private CA, and a client certificate when the service requires one. */
  tls?: TlsOptions
  /**
   * A fetch to send requests with instead of the built-in node:http agent (e.g. one that records or routes
   * requests); TLS settings then belong to it, not to `tls`.
   */
  fetch?: typeof fetch
}

export interface Exchange {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  query?: Record<string, string | number | boolean | undefined>
  body?: Record<string, unknown>
  /** A hold's token: sent as the Lock-Token header. */
  token?: string
  /** Overrides the client's per-request timeout. */
  timeoutMs?: number
  signal?: AbortSignal | undefined
  accept?: string
}

export const DEFAULT_TIMEOUT_MS = 10_000

export class Transport {
  readonly base: string
  readonly timeoutMs: number
  readonly #pathPrefix: string
  readonly #headers: Record<string, string>
  readonly #wire: Wire

  constructor(options: ClientOptions) {
    let base: URL
    try {
      base = new URL(options.url)
    } catch {
      throw new InvalidArgumentError('url', 'must be an absolute http:// or https:// URL')
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new InvalidArgumentError('url', 'must be http:// or https://')
    if (options.fetch && options.tls)
      throw new InvalidArgumentError('tls', 'does not apply to a fetch of your own: give it the TLS settings')
    this.base = options.url.replace(/\/+$/, '')
    this.#pathPrefix = base.pathname.replace(/\/+$/, '')
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.#headers = { accept: 'application/json' }
    if (options.apiKey) this.#headers.authorization = `Bearer ${options.apiKey}`
    if (options.userAgent) this.#headers['user-agent'] = options.userAgent
    this.#wire = options.fetch ? fetchWire(options.fetch) : nodeWire(base, options.tls)
  }

  /**
   * Sends the request; resolves to the answer once its headers are in. Transport failures are typed.
   * The timeout keeps running over the body (an event stream ends when it fires).
   */
  send(x: Exchange): Promise<Answer> {
    let pathAndQuery = x.path
    if (x.query) {
      const search = new URLSearchParams()
      for (const [name, value] of Object.entries(x.query)) if (value !== undefined) search.set(name, String(value))
      const text = search.toString()
      if (text) pathAndQuery += `?${text}`
    }
    const headers: Record<string, string> = { ...this.#headers }
    if (x.accept) headers.accept = x.accept
    if (x.token !== undefined) headers['lock-token'] = x.token
    let body: string | undefined
    if (x.body) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(x.body)
    }
    const timeoutMs = Math.max(1, Math.ceil(x.timeoutMs ?? this.timeoutMs))
    const signal = x.signal
    return this.#wire({
      method: x.method,
      path: this.#pathPrefix + pathAndQuery,
      url: this.base + pathAndQuery,
      headers,
      body,
      timeoutMs,
      signal,
      aborted: () => (signal?.reason instanceof Error ? signal.reason : new Error(String(signal?.reason))),
      timedOut: () => new TimeoutError(`no answer from the lock service at ${this.base} within ${timeoutMs} ms`),
      unreachable: (err) => new UnreachableError(`cannot reach the lock service at ${this.base}: ${describe(err)}`, { cause: err }),
    })
  }

  /** Sends the request and reads its JSON answer: the body of a 2xx, else the typed error. */
  async json<T>(x: Exchange): Promise<T> {
    const answer = await this.send(x)
    const text = await answer.text()
    let body: unknown
    try {
      body = text === '' ? {} : JSON.parse(text)
    } catch {
      body = undefined
    }
    const requestId = answer.header('x-request-id')
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      const what = `the lock service at ${this.base} answered ${answer.status} with a body that is not a JSON object`
      throw new LockServiceError('bad_answer', what, answer.status, requestId)
    }
    if (answer.status >= 200 && answer.status < 300) return body as T
    throw errorFromAnswer(answer.status, body, requestId, answer.header('retry-after') ?? null)
  }
}

/** The most useful part of a transport failure: the system error code (ECONNREFUSED, …) when there is one. */
function describe(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code
  if (typeof code === 'string') return code
  const cause = (err as { cause?: unknown } | undefined)?.cause
  const causeCode = (cause as { code?: unknown } | undefined)?.code
  if (typeof causeCode === 'string') return causeCode
  if (cause instanceof Error) return cause.message
  return err instanceof Error ? err.message : String(err)
}
