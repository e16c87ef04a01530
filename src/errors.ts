import { errorStatus, type ErrorCode } from './contract/error-codes.js'

/** An error a client sees: its code (src/contract/error-codes.ts) decides the status; body() is what is sent. */
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

/** How long (ms) to tell a client to wait before retrying an answer that says "not now". */
export const RETRY_AFTER_MS = {
  /** The backend could not decide (nodes down, no voting majority). */
  backend: 1000,
  /** This replica or this lock has the most waiters it takes. */
  busy: 1000,
  /** This replica is shutting down: another one answers at once. */
  shuttingDown: 1000,
  /** A held lock whose holds' remaining time is unknown. */
  held: 1000,
} as const

type Issues = { path: string; message: string }[]

/** What a request is about, for messages: a lock (of /locks or /rwlocks), a semaphore or an election. */
export type Kind = 'lock' | 'semaphore' | 'election'

/** Every ServiceError the service raises is built here, so codes, messages and hints stay consistent. */
export const fail = {
  invalid: (message: string, issues?: Issues) => new ServiceError('invalid_request', message, issues ? { issues } : {}),
  unauthorized: (message: string) => new ServiceError('unauthorized', message),
  forbidden: (message: string, details: Record<string, unknown> = {}) => new ServiceError('forbidden', message, details),
  /** Nothing held where the caller expected a hold. */
  notFound: (key: string, message: string) => new ServiceError('lock_not_found', message, { key }),
  notOwner: (key: string, kind: Kind = 'lock') =>
    new ServiceError(
      'not_owner',
      kind === 'lock'
        ? `lock "${key}" is held under another token`
        : kind === 'election'
          ? `election "${key}" is led by another candidate (this token is not the leader's)`
          : `semaphore "${key}" is held, but not by this token`,
      { key },
    ),
  held: (key: string, retryAfterMs: number, kind: Kind = 'lock') =>
    new ServiceError(
      'lock_held',
      kind === 'lock'
        ? `lock "${key}" is held by another owner`
        : kind === 'election'
          ? `election "${key}" has a leader (or candidates ahead in line)`
          : `semaphore "${key}" has too few free permits for this request, or others wait ahead of it`,
      { key, retryAfterMs },
      retryAfterMs,
    ),
  /**
   * Nothing holds it, but a hold ended without its holder's release and its lock-delay runs until
   * `delayedUntil`; `retryAfterMs` is that time plus jitter (so refused clients do not retry at once).
   */
  delayed: (key: string, retryAfterMs: number, delayedUntil: string, kind: Kind = 'lock') =>
    new ServiceError(
      'lock_delayed',
      kind === 'lock'
        ? `lock "${key}" is in its lock-delay: a hold ended without its holder's release, so no grant until ${delayedUntil}`
        : `semaphore "${key}" has too few free permits while the lock-delay of a hold that ended unreleased runs (until ${delayedUntil})`,
      { key, retryAfterMs, delayedUntil },
      retryAfterMs,
    ),
  /** A semaphore's limit is fixed while anyone holds or waits: `limit` is the one it has. */
  limitMismatch: (key: string, limit: number) =>
    new ServiceError('limit_mismatch', `semaphore "${key}" has limit ${limit} while anyone holds or waits; ask with that limit`, {
      key,
      limit,
    }),
  /** A holder's re-acquire names other permits than its hold has. */
  permitsMismatch: (key: string, permits: number) =>
    new ServiceError(
      'permits_mismatch',
      `this token holds ${permits} permits of semaphore "${key}"; a re-acquire asks for the same number`,
      { key, permits },
    ),
  upgradeNotSupported: (key: string) =>
    new ServiceError(
      'upgrade_not_supported',
      `this token holds a read hold on "${key}": release the read hold first, then ask for the write hold`,
      { key },
    ),
  tooManyWaiters: (message: string, details: Record<string, unknown> = {}) =>
    new ServiceError('too_many_waiters', message, details, RETRY_AFTER_MS.busy),
  tooManyReaders: (key: string, max: number) =>
    new ServiceError('too_many_readers', `lock "${key}" already has the most readers allowed (${max}, MAX_READERS)`, { key }),
  backendUnavailable: (message: string, details: Record<string, unknown>) =>
    new ServiceError('backend_unavailable', message, details, RETRY_AFTER_MS.backend),
  shuttingDown: () => new ServiceError('shutting_down', 'this replica is shutting down; retry on another', {}, RETRY_AFTER_MS.shuttingDown),
  /** The answer nobody reads: the client of a waiting acquire hung up. */
  clientGone: () => new ServiceError('client_gone', 'the client went away before its answer'),
  /** The session lapsed, was closed, never existed, or belongs to another API key (never says which). */
  sessionNotFound: () =>
    new ServiceError('session_not_found', 'no such session: it lapsed (no keepalive within its TTL), was closed, or never existed'),
  tooManyWatchers: (message: string) => new ServiceError('too_many_watchers', message, {}, RETRY_AFTER_MS.busy),
  tooManyHolds: (max: number) =>
    new ServiceError(
      'too_many_holds',
      `the session already has the most holds allowed (${max}, MAX_SESSION_HOLDS)`,
      {},
      RETRY_AFTER_MS.busy,
    ),
  tooManySessions: (name: string, max: number) =>
    new ServiceError(
      'too_many_sessions',
      `the API key "${name}" already has the most sessions open (${max}, MAX_SESSIONS_PER_KEY)`,
      {},
      RETRY_AFTER_MS.busy,
    ),
  /** Over the key's request rate: `retryAfterMs` is when its bucket has a request again. */
  rateLimited: (who: string, perSecond: number, burst: number, retryAfterMs: number) =>
    new ServiceError(
      'rate_limited',
      `${who} is over its request rate on this replica (${perSecond}/s, bursts of ${burst}); retry after retryAfterMs`,
      { retryAfterMs, limit: perSecond, burst },
      retryAfterMs,
    ),
  tooManyStreams: (who: string, max: number) =>
    new ServiceError(
      'too_many_streams',
      `${who} already has the most watches and observes open on this replica (${max}, MAX_STREAMS_PER_KEY); end one first`,
      { limit: max },
      RETRY_AFTER_MS.busy,
    ),
  /** The same error with more details (e.g. a 409's owners). */
  withDetails: (error: ServiceError, details: Record<string, unknown>) =>
    new ServiceError(error.code, error.message, { ...error.details, ...details }, error.retryAfterMs),
  /** The same refusal, saying how long the request waited in line first. */
  afterWaiting: (error: ServiceError, waitedMs: number) =>
    new ServiceError(error.code, error.message, { ...error.details, waitedMs: Math.round(waitedMs) }, error.retryAfterMs),
}
