/**
 * The one error taxonomy: every error a client can see has a code, and the code decides the status.
 * Body shape: { error: code, message: one human sentence, ...details }.
 */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  lock_not_found: 404,
  session_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  lock_held: 409,
  lock_delayed: 409,
  not_owner: 409,
  upgrade_not_supported: 409,
  limit_mismatch: 409,
  permits_mismatch: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  too_many_waiters: 429,
  too_many_readers: 429,
  too_many_holds: 429,
  too_many_sessions: 429,
  too_many_watchers: 429,
  rate_limited: 429,
  too_many_streams: 429,
  headers_too_large: 431,
  backend_unavailable: 503,
  shutting_down: 503,
  internal_error: 500,
  /** Never sent: the client hung up before its answer (nginx's 499); it shows in logs and metrics. */
  client_gone: 499,
} as const

export type ErrorCode = keyof typeof errorStatus

/** Every error code, in the table's order (the order openapi.yaml lists them). */
export const errorCodes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]
