/**
 * The one error taxonomy: every error a client can see has a code, and the code decides the status.
 * Body shape: { error: code, message: one human sentence, ...details }.
 */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  lock_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  lock_held: 409,
  not_owner: 409,
  upgrade_not_supported: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  too_many_waiters: 429,
  too_many_readers: 429,
  headers_too_large: 431,
  backend_unavailable: 503,
  shutting_down: 503,
  internal_error: 500,
} as const

export type ErrorCode = keyof typeof errorStatus

export class ServiceError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** ms the client should wait before retrying; sent as Retry-After (whole seconds, at least 1). */
    readonly retryAfterMs?: number,
  ) {
    // An answer to a client, not a fault in this process: no stack to capture (a refused attempt
    // makes one of these, so they are on the hot path of waiting).
    const stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'ServiceError'
    this.status = errorStatus[code]
  }

  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details }
  }
}

export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}
