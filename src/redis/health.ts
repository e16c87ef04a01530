import type { Redis } from 'ioredis'
import type { NodeFailureReason } from '../contract/words.js'
import type { Metrics } from '../metrics.js'
import { classifyRedisError, type ClassifiedError } from './errors.js'
import { alsoForDuplicates } from './topology.js'

/**
 * Why a Redis node cannot be used, in the words an operator needs: each failure is classified
 * (src/redis/errors.ts), the last one is kept (shown per node in /readyz and 503 bodies), counted in
 * `redis_node_errors_total{node,reason}`, and a node going down or coming back is logged once, at
 * warn, with its index and host:port (never a password or a URL).
 */

export interface NodeLastError {
  reason: NodeFailureReason
  /** One sentence, with the server's own words where it gave any. */
  message: string
  /** ISO 8601 */
  at: string
}

/** The part of a pino logger the nodes write to. */
export interface NodeLog {
  warn(fields: object, message: string): void
  info(fields: object, message: string): void
}

type Failure = Pick<ClassifiedError, 'reason' | 'message'>

/**
 * The health of one node, fed by its client's events. States: `starting` (not connected yet, no
 * failure seen), `up` (connected and known to be a master), `down` (with a reason). Only changes of
 * state — and of the reason while down — are logged, so a node that keeps refusing reconnects logs
 * one line, not one per retry.
 */
export class NodeHealth {
  private state: 'starting' | 'up' | 'down' = 'starting'
  private downReason: NodeFailureReason | undefined
  private downSince = 0
  private pendingClose: NodeJS.Timeout | undefined
  private last: NodeLastError | null = null
  private stopped = false

  constructor(
    private readonly index: number,
    private readonly address: string,
    /** Strings never to show (the URL's password), replaced by *** in messages. */
    private readonly secrets: readonly string[],
    private readonly metrics: Metrics,
    private readonly log: NodeLog | undefined,
  ) {}

  get lastError(): NodeLastError | null {
    return this.last
  }

  /** An 'error' event of the connection. */
  connectionFailed(err: unknown): void {
    const classified = classifyRedisError(err)
    if (classified.notConnected) return // a consequence of an earlier failure, already counted
    this.failed(classified)
  }

  /** The connection closed: down, with the reason the next failure gives (or 'other' if none comes). */
  closed(): void {
    if (this.state !== 'up' || this.stopped) return
    this.state = 'down'
    this.downReason = undefined
    this.downSince = Date.now()
    this.pendingClose = setTimeout(() => {
      this.pendingClose = undefined
      if (this.state === 'down' && this.downReason === undefined) this.failed({ reason: 'other', message: 'the connection closed' })
    }, 250)
    this.pendingClose.unref()
  }

  /** INFO told the node's role: a master is up; anything else cannot hold locks. */
  identified(role: string | undefined): void {
    if (role !== 'master') {
      this.failed({
        reason: 'replica',
        message: `the node is a ${role ?? 'server of unknown role'}, not a master: lock nodes must be independent masters`,
      })
      return
    }
    const was = this.state
    const reason = this.downReason
    this.cancelPendingClose()
    this.state = 'up'
    this.downReason = undefined
    if (was !== 'down') return
    const downMs = Date.now() - this.downSince
    if (reason === undefined) {
      this.warn({ downMs }, `Redis node ${this.index} at ${this.address} reconnected after its connection closed (${downMs} ms)`)
    } else {
      this.warn({ downMs, reason }, `Redis node ${this.index} at ${this.address} is back up after ${downMs} ms down (${reason})`)
    }
  }

  /**
   * A command failed: counted by reason, kept as the last error. A command refused because the node
   * is not connected takes the reason the node went down for. Returns the reason.
   */
  commandFailed(failure: ClassifiedError): NodeFailureReason {
    if (failure.notConnected) {
      const reason = this.downReason ?? this.last?.reason ?? 'other'
      this.metrics.nodeErrors.inc({ node: String(this.index), reason })
      return reason
    }
    this.record(failure)
    return failure.reason
  }

  private failed(failure: Failure): void {
    this.cancelPendingClose()
    if (this.stopped) return
    this.record(failure)
    if (this.state === 'down' && this.downReason === failure.reason) return
    const wasDown = this.state === 'down' && this.downReason !== undefined
    if (this.state !== 'down') this.downSince = Date.now()
    this.state = 'down'
    this.downReason = failure.reason
    const what = wasDown ? 'is still down, now' : 'is down'
    this.warn(
      { reason: failure.reason, error: this.clean(failure.message) },
      `Redis node ${this.index} at ${this.address} ${what} (${failure.reason}): ${this.clean(failure.message)}`,
    )
  }

  private record(failure: Failure): void {
    this.metrics.nodeErrors.inc({ node: String(this.index), reason: failure.reason })
    this.last = { reason: failure.reason, message: this.clean(failure.message), at: new Date().toISOString() }
  }

  private cancelPendingClose(): void {
    if (this.pendingClose) clearTimeout(this.pendingClose)
    this.pendingClose = undefined
  }

  private warn(fields: object, message: string): void {
    this.log?.warn({ node: this.index, address: this.address, ...fields }, message)
  }

  private clean(message: string): string {
    let text = message
    for (const secret of this.secrets) if (secret.length > 0) text = text.split(secret).join('***')
    return text
  }

  /** The node is closing: its connection going away is no failure. */
  close(): void {
    this.stopped = true
    this.cancelPendingClose()
  }
}

type Callback = (err: Error | null, value?: unknown) => void
type CommandMethod = (...args: unknown[]) => Promise<unknown>

/**
 * ioredis writes a few warnings to the console itself (plain text, outside the JSON log). They are
 * all about AUTH and the ready check, so the client's `auth` and `info` are wrapped (and those of the
 * connections duplicated from it):
 * - a password given to a server that needs none works: the warning goes to the JSON log instead;
 * - a username given to a Redis 5 (AUTH takes one argument there) and INFO refused by the ACL
 *   (NOPERM) become failed connections, classified `auth`: the service cannot work that way (it
 *   needs INFO to know the node's role).
 *
 * That the handshake calls `auth` and `info` through the client object is an ioredis internal: pinned
 * with its version and guarded by test/internals/private-apis.test.ts.
 */
export function quietClient(client: Redis, onNotice: (message: string) => void): void {
  // Connections made from this one (the wait room's subscribers) stay as quiet; the notices are this one's.
  alsoForDuplicates(client, (copy) => quietClient(copy, () => undefined))
  const methods = client as unknown as Record<'auth' | 'info', CommandMethod>
  const wrap = (name: 'auth' | 'info', rewrite: (err: Error) => unknown) => {
    const original = methods[name].bind(client)
    methods[name] = (...args: unknown[]) => {
      const callback = typeof args.at(-1) === 'function' ? (args.pop() as Callback) : undefined
      const result = original(...args).catch((err: unknown) => rewrite(err instanceof Error ? err : new Error(String(err))))
      if (!callback) return result
      // ioredis ignores the promise when it passes a callback: it must not reject unhandled.
      return result.then(
        (value) => callback(null, value),
        (err: Error) => callback(err),
      )
    }
  }
  wrap('auth', (err) => {
    if (/no password is set|without any password configured/i.test(err.message)) {
      onNotice('a password is given in REDIS_URLS but the server needs none (it is ignored)')
      return 'OK'
    }
    if (/wrong number of arguments for 'auth'/i.test(err.message)) {
      throw new Error('AUTH failed: this Redis (5 or older) takes no username: give only a password (redis://:password@host:port)')
    }
    throw err
  })
  wrap('info', (err) => {
    // Without the word NOPERM, which is what makes ioredis skip its ready check with a console warning.
    if (/NOPERM/.test(err.message))
      throw new Error(`AUTH failed: the Redis user may not run INFO, which the service needs (${err.message.replace(/NOPERM\s*/g, '')})`)
    throw err
  })
}
