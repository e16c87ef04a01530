import type { NodeFailureReason } from '../contract/words.js'

/**
 * What an ioredis error means, decided once: the reason an operator is shown (logs, /readyz, 503
 * bodies, `redis_node_errors_total{reason}`) and the failure a caller acts on (NodeError: the node
 * did not answer in time, is not reachable, or answered with an error). The reasons' names:
 * nodeFailureReasons (src/contract/words.ts).
 */

/** What a caller of a node learns: `unavailable` means the command ran nowhere. */
export type NodeFailure = 'timeout' | 'unavailable' | 'error'

export class NodeError extends Error {
  constructor(
    readonly reason: NodeFailure,
    message: string,
  ) {
    super(message)
    this.name = 'NodeError'
  }
}

export interface ClassifiedError {
  reason: NodeFailureReason
  /** For operators: one sentence, with the server's own words where it gave any. */
  message: string
  /** The error only says the connection is not there: the reason is whatever made it go. */
  notConnected: boolean
  /** For callers (NodeError). */
  failure: NodeFailure
  failureMessage: string
}

const AUTH = /\b(NOAUTH|WRONGPASS|NOPERM)\b|invalid password|AUTH failed|invalid username-password/i
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|EPROTO$|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_)/
const NOT_CONNECTED = /Stream isn't writeable|Connection is closed|connection close|enableOfflineQueue/i
const UNREACHABLE = /writeable|closed|ECONNREFUSED|ECONNRESET|EPIPE|connect/i
/** A cluster between owners of a slot (failover, resharding): the command ran nowhere. */
const BETWEEN_OWNERS = /\b(CLUSTERDOWN|TRYAGAIN|MOVED|ASK)\b|redirections|slots cache/i

/**
 * Classify what ioredis reported (a connection error, a failed command, or a reply error).
 * `timeoutMs` is the node timeout, named in a timeout's caller message.
 */
export function classifyRedisError(err: unknown, timeoutMs?: number): ClassifiedError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; message?: unknown; name?: unknown }
  const message = typeof e.message === 'string' ? e.message : String(err)
  const code = typeof e.code === 'string' ? e.code : ''
  return { ...operatorReason(message, code, e.name), notConnected: NOT_CONNECTED.test(message), ...callerFailure(err, message, timeoutMs) }
}

function operatorReason(message: string, code: string, name: unknown): Pick<ClassifiedError, 'reason' | 'message'> {
  if (AUTH.test(message)) {
    const hint = /NOAUTH/.test(message)
      ? 'the server needs a password and none was given: add it to REDIS_URLS (redis://:password@host:port)'
      : /NOPERM|may not run/.test(message)
        ? 'the Redis user may not run a command the service needs'
        : 'check the password (and user) in REDIS_URLS'
    return { reason: 'auth', message: `authentication failed: ${message.replace(/^Ready check failed: /, '')} (${hint})` }
  }
  if (code === 'ECONNREFUSED') return { reason: 'refused', message: `connection refused: nothing listens there (${message})` }
  if (TLS_CODE.test(code) || /\b(SSL|TLS)\b|certificate/i.test(message)) return { reason: 'tls', message: `TLS failed: ${message}` }
  if (code === 'ETIMEDOUT' || /timed out|timeout/i.test(message)) return { reason: 'timeout', message: `no answer in time (${message})` }
  if (name === 'ParserError' || /Protocol error|unexpected reply/i.test(message)) {
    return { reason: 'not_redis', message: `the server there does not speak the Redis protocol (${message})` }
  }
  if (/^READONLY\b/.test(message)) return { reason: 'replica', message: `the node is a read-only replica (${message})` }
  return { reason: 'other', message }
}

function callerFailure(err: unknown, message: string, timeoutMs: number | undefined): Pick<ClassifiedError, 'failure' | 'failureMessage'> {
  if (err instanceof NodeError) return { failure: err.reason, failureMessage: err.message }
  if (/timed out/i.test(message)) {
    return { failure: 'timeout', failureMessage: timeoutMs === undefined ? 'no answer in time' : `no answer within ${timeoutMs} ms` }
  }
  if (UNREACHABLE.test(message)) return { failure: 'unavailable', failureMessage: 'not connected' }
  if (BETWEEN_OWNERS.test(message)) return { failure: 'unavailable', failureMessage: message }
  return { failure: 'error', failureMessage: message }
}

/** The NodeError a caller gets for this classified error. */
export function nodeErrorOf(classified: ClassifiedError): NodeError {
  return new NodeError(classified.failure, classified.failureMessage)
}
