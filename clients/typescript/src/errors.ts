/**
 * Typed errors. Every error this library throws is a {@link LockServiceError}: the service's errors carry
 * its code, HTTP status, message and request id; local ones (bad arguments, transport, a lost hold)
 * carry a code of their own and status 0. Never a token or a session id in a message.
 */
import type { ErrorBody, LossReason, NodeState } from './wire.js'

/** The base type: `code` is the service's error code (`lock_held`, …) or a local one (`invalid_argument`, …). */
export class LockServiceError extends Error {
  override name = 'LockServiceError'
  /** The service's error code, or a local one: `invalid_argument`, `unreachable`, `timeout`, `lock_lost`, `bad_answer` (not JSON). */
  readonly code: string
  /** The HTTP status of the answer; 0 for a local error. */
  readonly status: number
  /** The answer's X-Request-Id (quote it to an operator), when there was an answer. */
  readonly requestId: string | undefined
  /** The error body's other fields (`key`, `issues`, `limit`, …). */
  readonly details: Readonly<Record<string, unknown>>

  constructor(
    code: string,
    message: string,
    status = 0,
    requestId?: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.code = code
    this.status = status
    this.requestId = requestId
    this.details = details
  }

  /** ms the service asked to wait before retrying (the body's retryAfterMs, else Retry-After), if any. */
  get retryAfterMs(): number | undefined {
    const ms = this.details.retryAfterMs
    return typeof ms === 'number' ? ms : undefined
  }
}

/** 409 `lock_held`: someone else holds it (and a wait, if any, ran out). */
export class LockHeldError extends LockServiceError {
  override name = 'LockHeldError'
  /** The owner labels of the holds in the way (those that have one). */
  get owners(): readonly string[] {
    return Array.isArray(this.details.owners) ? (this.details.owners as string[]) : []
  }
  /** How long the request waited in line before giving up. */
  get waitedMs(): number | undefined {
    return typeof this.details.waitedMs === 'number' ? this.details.waitedMs : undefined
  }
}

/** 409 `lock_delayed`: a hold that ended without a release keeps the lock out of reach until `delayedUntil`. */
export class LockDelayedError extends LockServiceError {
  override name = 'LockDelayedError'
  /** When the delay ends. */
  get delayedUntil(): Date | undefined {
    return typeof this.details.delayedUntil === 'string' ? new Date(this.details.delayedUntil) : undefined
  }
}

/** 409 `not_owner`: the hold exists under another token. */
export class NotOwnerError extends LockServiceError {
  override name = 'NotOwnerError'
}

/** 404 `lock_not_found`: nothing is held there (or not any more). */
export class LockNotFoundError extends LockServiceError {
  override name = 'LockNotFoundError'
}

/** 404 `session_not_found`: the session lapsed, was closed, or never existed. */
export class SessionNotFoundError extends LockServiceError {
  override name = 'SessionNotFoundError'
}

/** 409 `limit_mismatch`: the semaphore has another limit while anyone holds or waits. */
export class LimitMismatchError extends LockServiceError {
  override name = 'LimitMismatchError'
  /** The semaphore's limit. */
  get limit(): number | undefined {
    return typeof this.details.limit === 'number' ? this.details.limit : undefined
  }
}

/** 409 `permits_mismatch`: a re-acquire asked for other permits than the hold has. */
export class PermitsMismatchError extends LockServiceError {
  override name = 'PermitsMismatchError'
}

/** 409 `upgrade_not_supported`: the token holds a read hold; release it before asking to write. */
export class UpgradeNotSupportedError extends LockServiceError {
  override name = 'UpgradeNotSupportedError'
}

/** 429 `too_many_*` or `rate_limited`: a limit of the service (waiters, readers, holds, sessions, watchers, streams, request rate). */
export class TooManyError extends LockServiceError {
  override name = 'TooManyError'
}

/** 429 `too_many_waiters`. */
export class TooManyWaitersError extends TooManyError {
  override name = 'TooManyWaitersError'
}

/** 503 `backend_unavailable` / `shutting_down`: retry later (the library does, within its budget). */
export class BackendUnavailableError extends LockServiceError {
  override name = 'BackendUnavailableError'
  /** Per-node detail, when the service sent it. */
  get nodes(): readonly NodeState[] {
    return Array.isArray(this.details.nodes) ? (this.details.nodes as NodeState[]) : []
  }
}

/** 401 `unauthorized`: no API key, or an unknown one. */
export class UnauthorizedError extends LockServiceError {
  override name = 'UnauthorizedError'
}

/** 403 `forbidden`: the key may not touch this key (or is not an admin). */
export class ForbiddenError extends LockServiceError {
  override name = 'ForbiddenError'
}

/** 400 `invalid_request` (and the other 4xx about the request's shape). */
export class InvalidRequestError extends LockServiceError {
  override name = 'InvalidRequestError'
  /** What was wrong, field by field. */
  get issues(): readonly { path: string; message: string }[] {
    return Array.isArray(this.details.issues) ? (this.details.issues as { path: string; message: string }[]) : []
  }
}

/** Local: an argument the service would refuse, refused before any request. `argument` names it. */
export class InvalidArgumentError extends LockServiceError {
  override name = 'InvalidArgumentError'
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super('invalid_argument', `${argument}: ${message}`)
  }
}

/** Local: the service could not be reached (refused, reset, DNS, …). */
export class UnreachableError extends LockServiceError {
  override name = 'UnreachableError'
  constructor(message: string, options?: ErrorOptions) {
    super('unreachable', message, 0, undefined, {}, options)
  }
}

/** Local: no answer within the request's timeout. */
export class TimeoutError extends LockServiceError {
  override name = 'TimeoutError'
  constructor(message: string) {
    super('timeout', message)
  }
}

/** Local: the hold was lost; `reason` says how. The reason of a hold's aborted `signal`. */
export class LockLostError extends LockServiceError {
  override name = 'LockLostError'
  constructor(
    readonly reason: LossReason,
    readonly key: string,
    message: string,
  ) {
    super('lock_lost', message)
  }
}

const byCode: Record<string, new (...args: ConstructorParameters<typeof LockServiceError>) => LockServiceError> = {
  lock_held: LockHeldError,
  lock_delayed: LockDelayedError,
  not_owner: NotOwnerError,
  lock_not_found: LockNotFoundError,
  session_not_found: SessionNotFoundError,
  limit_mismatch: LimitMismatchError,
  permits_mismatch: PermitsMismatchError,
  upgrade_not_supported: UpgradeNotSupportedError,
  too_many_waiters: TooManyWaitersError,
  too_many_readers: TooManyError,
  too_many_holds: TooManyError,
  too_many_sessions: TooManyError,
  too_many_watchers: TooManyError,
  too_many_streams: TooManyError,
  rate_limited: TooManyError,
  backend_unavailable: BackendUnavailableError,
  shutting_down: BackendUnavailableError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  invalid_request: InvalidRequestError,
  payload_too_large: InvalidRequestError,
  uri_too_long: InvalidRequestError,
  unsupported_media_type: InvalidRequestError,
  headers_too_large: InvalidRequestError,
}

/** The typed error for an error answer; an unknown code is the base type with that code. */
export function errorFromAnswer(
  status: number,
  body: unknown,
  requestId: string | undefined,
  retryAfterHeader: string | null,
): LockServiceError {
  const fields =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Partial<ErrorBody> & Record<string, unknown>) : {}
  const code = typeof fields.error === 'string' ? fields.error : `http_${status}`
  const message = typeof fields.message === 'string' ? fields.message : `the service answered HTTP ${status}`
  const details: Record<string, unknown> = { ...fields }
  delete details.error
  delete details.message
  const header = Number(retryAfterHeader)
  if (details.retryAfterMs === undefined && retryAfterHeader !== null && Number.isFinite(header) && header > 0)
    details.retryAfterMs = header * 1000
  const Type = byCode[code] ?? LockServiceError
  return new Type(code, message, status, requestId, details)
}
