import type { GrantBody } from '../contract/wire.js'
import { CliError, EXIT } from './exit.js'

/** The body of an error reply: `{ error, message, ...details }`. */
export interface ErrorBody {
  error: string
  message: string
  retryAfterMs?: number
  waitedMs?: number
  [detail: string]: unknown
}

/** A grant as the service sends it. */
export type Grant = GrantBody

export interface Reply {
  status: number
  body: Record<string, unknown>
}

export interface RequestOptions {
  token?: string
  query?: Record<string, string | number | undefined>
  /** Gives up (as unreachable) after this long. */
  timeoutMs: number
  /** Aborts the request (the caller's own reason, e.g. a signal): rejects with an AbortedError. */
  signal?: AbortSignal
  /** A JSON body. */
  body?: Record<string, unknown>
}

/** The service could not be reached, or did not answer in time. */
export class UnreachableError extends Error {
  override name = 'UnreachableError'
}

/** The caller's own signal aborted the request. */
export class AbortedError extends Error {
  override name = 'AbortedError'
}

/** A small JSON client for the lock service: Node's fetch, `Authorization: Bearer` when a key is set. */
export class LockServiceClient {
  readonly #base: string
  readonly #key: string | undefined

  constructor(url: string, key: string | undefined) {
    this.#base = url.replace(/\/+$/, '')
    this.#key = key
  }

  get url(): string {
    return this.#base
  }

  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: RequestOptions): Promise<Reply> {
    const url = new URL(this.#base + path)
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const headers: Record<string, string> = { accept: 'application/json' }
    if (this.#key) headers.authorization = `Bearer ${this.#key}`
    if (options.token) headers['lock-token'] = options.token
    if (options.body) headers['content-type'] = 'application/json'
    const timeoutMs = Math.max(1, Math.ceil(options.timeoutMs))
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout
    let response: Response
    let text: string
    try {
      response = await fetch(url, { method, headers, signal, ...(options.body ? { body: JSON.stringify(options.body) } : {}) })
      text = await response.text()
    } catch (err) {
      if (options.signal?.aborted) throw new AbortedError('aborted')
      if (timeout.aborted) throw new UnreachableError(`no answer from the lock service at ${this.#base} within ${timeoutMs} ms`)
      throw new UnreachableError(`cannot reach the lock service at ${this.#base}: ${describeNetworkError(err)}`)
    }
    let body: unknown
    try {
      body = text === '' ? {} : JSON.parse(text)
    } catch {
      throw new CliError(EXIT.protocol, `the lock service at ${this.#base} answered ${response.status} with a body that is not JSON`)
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new CliError(
        EXIT.protocol,
        `the lock service at ${this.#base} answered ${response.status} with a body that is not a JSON object`,
      )
    }
    return { status: response.status, body: body as Record<string, unknown> }
  }
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause
  const code = (cause as { code?: unknown } | undefined)?.code
  if (typeof code === 'string') return code
  if (cause instanceof Error) return cause.message
  return err instanceof Error ? err.message : String(err)
}

/** The error part of a reply, or a generic one when the body does not have the documented shape. */
export function errorOf(reply: Reply): ErrorBody {
  const { error, message } = reply.body
  if (typeof error === 'string' && typeof message === 'string') return reply.body as ErrorBody
  return { error: `http_${reply.status}`, message: `HTTP ${reply.status}` }
}

export function isGrant(body: Record<string, unknown>): body is Record<string, unknown> & Grant {
  return (
    typeof body.key === 'string' &&
    typeof body.token === 'string' &&
    typeof body.fence === 'number' &&
    Number.isSafeInteger(body.fence) &&
    typeof body.ttlMs === 'number' &&
    typeof body.validityMs === 'number' &&
    typeof body.mode === 'string'
  )
}

/**
 * The exit code and one-line message for an error reply that ends a command. `context` says what
 * was being done ("acquire reports:daily").
 */
export function failure(context: string, reply: Reply): CliError {
  const err = errorOf(reply)
  const text = `${context}: ${err.message} (${err.error})`
  switch (reply.status) {
    case 400:
    case 413:
    case 415:
      return new CliError(EXIT.usage, text + issuesOf(err))
    case 401:
    case 403:
      return new CliError(EXIT.noPermission, text)
    case 404:
      return new CliError(err.error === 'lock_not_found' ? EXIT.failed : EXIT.protocol, text)
    case 409:
      if (err.error === 'lock_held') return new CliError(EXIT.notObtained, heldText(context, err))
      if (err.error === 'lock_delayed') return new CliError(EXIT.notObtained, text)
      if (err.error === 'limit_mismatch' || err.error === 'permits_mismatch') return new CliError(EXIT.mismatch, text)
      return new CliError(EXIT.failed, text)
    case 429:
      return new CliError(EXIT.notObtained, text)
    case 503:
      return new CliError(EXIT.unavailable, text)
    default:
      return new CliError(EXIT.protocol, `${context}: unexpected answer ${reply.status}: ${err.message} (${err.error})`)
  }
}

function heldText(context: string, err: ErrorBody): string {
  const waited = typeof err.waitedMs === 'number' ? ` after waiting ${err.waitedMs} ms` : ''
  const retry = typeof err.retryAfterMs === 'number' ? `; retry in about ${err.retryAfterMs} ms` : ''
  return `${context}: held by someone else${waited}${retry} (lock_held)`
}

function issuesOf(err: ErrorBody): string {
  const issues = err.issues
  if (!Array.isArray(issues) || issues.length === 0) return ''
  const parts = issues.flatMap((i: unknown) => {
    const { path, message } = (i ?? {}) as { path?: unknown; message?: unknown }
    return typeof message === 'string' ? [typeof path === 'string' && path ? `${path}: ${message}` : message] : []
  })
  // The service's message is its first issue already: say each once.
  const more = parts.filter((part) => part !== err.message)
  return more.length > 0 ? ` — ${more.join('; ')}` : ''
}

export function unreachable(context: string, err: UnreachableError): CliError {
  return new CliError(EXIT.unavailable, `${context}: ${err.message}`)
}
