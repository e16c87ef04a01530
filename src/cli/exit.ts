/**
 * lockctl's exit codes (sysexits.h where one fits). `run` otherwise exits with CMD's own code, or
 * 128 + the signal number when CMD died by a signal.
 */
export const EXIT = {
  ok: 0,
  /** renew / release: the lock is gone (404) or held under another token (409); status: not held */
  failed: 1,
  /** EX_USAGE: bad command line, or a request the service refused as invalid (400) */
  usage: 64,
  /** EX_UNAVAILABLE: the service is unreachable, timed out, or answered 503 */
  unavailable: 69,
  /** EX_SOFTWARE: `run` lost the lock while CMD was running (CMD was stopped) */
  lockLost: 70,
  /** EX_TEMPFAIL: the lock was not obtained (held by someone else after the wait, or too many waiters) */
  notObtained: 75,
  /** EX_PROTOCOL: the service answered something lockctl does not understand */
  protocol: 76,
  /** EX_NOPERM: 401 unauthorized / 403 forbidden (API key missing, wrong, or outside its prefixes) */
  noPermission: 77,
  /**
   * EX_CONFIG: a semaphore asked for with another limit than the one it has while others hold or wait
   * (409 limit_mismatch), or a holder asking again for other permits (409 permits_mismatch): clients
   * disagree, and retrying will not help
   */
  mismatch: 78,
  /** CMD was found but could not be executed */
  cannotExecute: 126,
  /** CMD was not found */
  notFound: 127,
} as const

/** A failure that ends lockctl with `code` after printing `message` (one line) on stderr. */
export class CliError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(EXIT.usage, message)
    this.name = 'UsageError'
  }
}
