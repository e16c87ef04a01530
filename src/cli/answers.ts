/** What the client library's errors mean for lockctl: its exit code and the one line it prints. */
import { InvalidArgumentError, LockServiceError, TimeoutError, UnreachableError } from '@lock-service/client'
import { CliError, EXIT } from './exit.js'

/**
 * Runs one operation of the client library. A failure becomes the CliError that ends lockctl (exit
 * code, and `context` — what was being done, "acquire reports:daily" — in its message); an operation
 * abandoned because `signal` aborted rejects as it is.
 */
export async function call<T>(context: string, operation: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await operation()
  } catch (err) {
    if (signal?.aborted) throw err
    throw failure(context, err)
  }
}

/** The exit code and one-line message for an error that ends a command. */
export function failure(context: string, err: unknown): CliError {
  if (err instanceof CliError) return err
  if (!(err instanceof LockServiceError)) {
    return new CliError(EXIT.protocol, `${context}: ${err instanceof Error ? err.message : String(err)}`)
  }
  if (err instanceof InvalidArgumentError) return new CliError(EXIT.usage, `${context}: ${err.message}`)
  if (err instanceof UnreachableError || err instanceof TimeoutError) return new CliError(EXIT.unavailable, `${context}: ${err.message}`)
  if (err.code === 'bad_answer') return new CliError(EXIT.protocol, `${context}: ${err.message}`)
  const text = `${context}: ${err.message} (${err.code})`
  switch (err.status) {
    case 400:
    case 413:
    case 415:
      return new CliError(EXIT.usage, text + issuesOf(err))
    case 401:
    case 403:
      return new CliError(EXIT.noPermission, text)
    case 404:
      return new CliError(err.code === 'lock_not_found' ? EXIT.failed : EXIT.protocol, text)
    case 409:
      if (err.code === 'lock_held') return new CliError(EXIT.notObtained, heldText(context, err))
      if (err.code === 'lock_delayed') return new CliError(EXIT.notObtained, text)
      if (err.code === 'limit_mismatch' || err.code === 'permits_mismatch') return new CliError(EXIT.mismatch, text)
      return new CliError(EXIT.failed, text)
    case 429:
      return new CliError(EXIT.notObtained, text)
    case 503:
      return new CliError(EXIT.unavailable, text)
    default:
      return new CliError(EXIT.protocol, `${context}: unexpected answer ${err.status}: ${err.message} (${err.code})`)
  }
}

/** `404 lock_not_found (message)`: an error answer as lockctl's messages quote it. */
export function describeAnswer(err: LockServiceError): string {
  return `${err.status} ${err.code} (${err.message})`
}

function heldText(context: string, err: LockServiceError): string {
  const waited = typeof err.details.waitedMs === 'number' ? ` after waiting ${err.details.waitedMs} ms` : ''
  const retry = err.retryAfterMs !== undefined ? `; retry in about ${err.retryAfterMs} ms` : ''
  return `${context}: held by someone else${waited}${retry} (lock_held)`
}

function issuesOf(err: LockServiceError): string {
  const issues = err.details.issues
  if (!Array.isArray(issues) || issues.length === 0) return ''
  const parts = issues.flatMap((i: unknown) => {
    const { path, message } = (i ?? {}) as { path?: unknown; message?: unknown }
    return typeof message === 'string' ? [typeof path === 'string' && path ? `${path}: ${message}` : message] : []
  })
  // The service's message is its first issue already: say each once.
  const more = parts.filter((part) => part !== err.message)
  return more.length > 0 ? ` — ${more.join('; ')}` : ''
}
