import { spawn, type ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { AbortedError, errorOf, failure, isGrant, LockServiceClient, unreachable, UnreachableError, type Grant, type Reply } from './client.js'
import { holdPath, REQUEST_TIMEOUT_MS } from './commands.js'
import { CliError, EXIT } from './exit.js'

/** Signals lockctl passes on to CMD's process group. */
export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const

/** Bound on the release after CMD exits (all attempts together). */
const RELEASE_BUDGET_MS = 5_000
/** The same after the lock was lost: a courtesy that must not hold up the exit for long. */
const LOST_RELEASE_BUDGET_MS = 1_000

export function signalExitCode(signal: NodeJS.Signals | null | undefined): number {
  const n = signal ? constants.signals[signal] : undefined
  return 128 + (n ?? 0)
}

/**
 * `lockctl run KEY -- CMD...`: acquire, run CMD in its own process group with LOCK_KEY / LOCK_FENCE /
 * LOCK_TOKEN in its environment, renew every third of the validity, stop CMD when the lock is lost,
 * release when CMD exits. Resolves to lockctl's exit code.
 */
export async function runLocked(client: LockServiceClient, o: Options, warn: (line: string) => void): Promise<number> {
  const what = o.mode === 'exclusive' ? o.lockKey : `${o.lockKey} (${o.mode})`
  const context = `run ${what}`
  const path = holdPath(o.mode, o.lockKey)

  // Before CMD exists, a signal abandons the acquire (the service rolls back a grant that races a
  // hang-up); afterwards it is forwarded to CMD's process group.
  const interrupted = new AbortController()
  let firstSignal: NodeJS.Signals | undefined
  let child: ChildProcess | undefined
  // `evenAfterExit`: also when CMD itself has exited, for what is left of its group (its pid, the
  // group id, cannot be reused while any member lives).
  const signalGroup = (signal: NodeJS.Signals, evenAfterExit = false): void => {
    if (child?.pid === undefined) return
    if (!evenAfterExit && (child.exitCode !== null || child.signalCode !== null)) return
    try {
      process.kill(-child.pid, signal)
    } catch {
      // the group is gone already
    }
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    if (child) return signalGroup(signal)
    firstSignal ??= signal
    interrupted.abort()
  }
  for (const s of FORWARDED_SIGNALS) process.on(s, onSignal)
  // Ctrl-Z would stop lockctl (and its renewals) but not CMD, which has its own session: the lock
  // would lapse under a running CMD. So lockctl does not stop.
  const onStop = (): void => warn(`lockctl: ${context}: ignoring SIGTSTP (CMD runs under a lock that must keep being renewed)`)
  process.on('SIGTSTP', onStop)
  // If lockctl itself dies (an unexpected error), CMD must not carry on without renewals.
  const onExit = (): void => signalGroup('SIGTERM')
  process.on('exit', onExit)

  try {
    // 1. Acquire.
    const started = performance.now()
    let reply: Reply
    try {
      reply = await client.request('POST', path, {
        query: { ttl: o.ttl, wait: o.wait },
        timeoutMs: o.waitMs + REQUEST_TIMEOUT_MS,
        signal: interrupted.signal,
      })
    } catch (err) {
      if (err instanceof AbortedError) {
        warn(`lockctl: ${context}: interrupted by ${firstSignal} while acquiring`)
        return signalExitCode(firstSignal)
      }
      if (err instanceof UnreachableError) throw unreachable(context, err)
      throw err
    }
    if (reply.status !== 200 && reply.status !== 201) throw failure(context, reply)
    if (!isGrant(reply.body)) throw new CliError(EXIT.protocol, `${context}: the grant lacks its token or fence`)
    const grant: Grant = reply.body
    const release = (budgetMs = RELEASE_BUDGET_MS): Promise<Reply | string> => releaseHold(client, path, grant.token, budgetMs)
    if (firstSignal) {
      await release()
      warn(`lockctl: ${context}: interrupted by ${firstSignal} while acquiring`)
      return signalExitCode(firstSignal)
    }

    // validityMs counts from when the service decided the grant, which lockctl only knows to lie
    // between sending the request and receiving the answer: it takes the earlier. After a long wait in
    // line that would leave little of the window, so a renew (which does not wait: its own send time
    // is a close bound) re-anchors it before CMD starts.
    let anchor = started
    let validityMs = grant.validityMs
    if (performance.now() - started > grant.validityMs / 3) {
      const sent = performance.now()
      let confirmed: Reply
      try {
        confirmed = await client.request('PUT', `${path}/renew`, { token: grant.token, timeoutMs: REQUEST_TIMEOUT_MS, signal: interrupted.signal })
      } catch (err) {
        await release()
        if (err instanceof AbortedError) {
          warn(`lockctl: ${context}: interrupted by ${firstSignal} while acquiring`)
          return signalExitCode(firstSignal)
        }
        if (err instanceof UnreachableError) throw unreachable(context, err)
        throw err
      }
      if (confirmed.status !== 200 || !isGrant(confirmed.body)) {
        await release()
        if (confirmed.status === 404 || confirmed.status === 409) {
          throw new CliError(EXIT.notObtained, `${context}: the lock was granted after a wait but lapsed before it could be used (${errorOf(confirmed).error})`)
        }
        throw failure(context, confirmed)
      }
      anchor = sent
      validityMs = confirmed.body.validityMs
    }

    // 2. Start CMD in its own process group (so that stopping it reaches its children too).
    const [file, ...args] = o.cmd as [string, ...string[]]
    const env = { ...process.env, LOCK_KEY: o.lockKey, LOCK_FENCE: String(grant.fence), LOCK_TOKEN: grant.token }
    const started_ = spawn(file, args, { stdio: 'inherit', env, detached: true })
    child = started_
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      started_.once('exit', (code, signal) => resolve({ code, signal }))
    })
    const spawnError = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      started_.once('spawn', () => resolve(null))
      started_.once('error', (err) => resolve(err))
    })
    if (spawnError) {
      child = undefined
      await release()
      const notFound = spawnError.code === 'ENOENT'
      throw new CliError(notFound ? EXIT.notFound : EXIT.cannotExecute, `${context}: cannot run ${JSON.stringify(file)}: ${notFound ? 'command not found' : spawnError.code ?? spawnError.message}`)
    }

    // 3. Keep the lock while CMD runs.
    const keeper = new Keeper(client, path, grant.token, anchor + validityMs, validityMs, o.graceMs, what, warn, signalGroup)
    keeper.start()
    const { code, signal } = await exited
    keeper.stop()

    if (keeper.lost === undefined && performance.now() > keeper.deadline) {
      keeper.lost = 'its validity ran out just as CMD exited'
      keeper.gone = false
      warn(`lockctl: ${context}: lost the lock: ${keeper.lost}`)
    }
    if (keeper.lost !== undefined) {
      signalGroup('SIGKILL', true) // whatever is left of CMD's group has no lock either
      if (!keeper.gone) await release(LOST_RELEASE_BUDGET_MS)
      return EXIT.lockLost
    }

    // 4. Release.
    const released = await release()
    if (typeof released === 'string') {
      warn(`lockctl: ${context}: could not release the lock (${released}); it expires within ${grant.ttlMs} ms`)
    } else if (released.status === 404 || released.status === 409) {
      const err = errorOf(released)
      warn(`lockctl: ${context}: lost the lock before CMD finished: at release the service answered ${released.status} ${err.error} (${err.message})`)
      return EXIT.lockLost
    } else if (released.status !== 200) {
      const err = errorOf(released)
      warn(`lockctl: ${context}: could not release the lock (${released.status} ${err.error}: ${err.message}); it expires within ${grant.ttlMs} ms`)
    }
    return code ?? signalExitCode(signal)
  } finally {
    for (const s of FORWARDED_SIGNALS) process.off(s, onSignal)
    process.off('SIGTSTP', onStop)
    process.off('exit', onExit)
  }
}

/**
 * DELETE the hold, retrying transient failures (network, 503) within `budgetMs`. Resolves to the
 * last reply, or to a description of the last network failure.
 */
async function releaseHold(client: LockServiceClient, path: string, token: string, budgetMs: number): Promise<Reply | string> {
  const until = performance.now() + budgetMs
  let last: Reply | string = 'not attempted'
  for (let attempt = 0; ; attempt++) {
    const left = until - performance.now()
    if (left < 50) return last
    try {
      last = await client.request('DELETE', path, { token, timeoutMs: Math.min(left, REQUEST_TIMEOUT_MS) })
      if (last.status !== 503) return last
    } catch (err) {
      last = err instanceof Error ? err.message : String(err)
    }
    await sleep(Math.min(100 * 2 ** attempt, 1000))
  }
}

/**
 * Renews the hold every third of its validity. The lock counts as lost when a renew answers that it is
 * gone or not ours (404 / 409), when renewing cannot succeed (400 / 401 / 403), or when renewals keep
 * failing until the validity of the last successful grant or renew runs out. Then CMD's process
 * group gets SIGTERM, and SIGKILL after the grace period.
 */
class Keeper {
  /** performance.now() at which the last grant or renew stops being valid. */
  deadline: number
  /** Why the lock was lost (undefined: still held). */
  lost: string | undefined
  /** The service said the hold no longer exists or is not ours: nothing to release. */
  gone = false
  readonly #stopped = new AbortController()
  #deadlineTimer: NodeJS.Timeout | undefined
  #killTimer: NodeJS.Timeout | undefined

  constructor(
    readonly client: LockServiceClient,
    readonly path: string,
    readonly token: string,
    deadline: number,
    readonly validityMs: number,
    readonly graceMs: number,
    readonly what: string,
    readonly warn: (line: string) => void,
    readonly signalGroup: (signal: NodeJS.Signals) => void,
  ) {
    this.deadline = deadline
  }

  start(): void {
    this.#armDeadline()
    this.#loop().catch((err: unknown) => this.#lose(`renewing failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`, false))
  }

  stop(): void {
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    clearTimeout(this.#killTimer)
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer)
    this.#deadlineTimer = setTimeout(
      () => this.#lose('no renewal succeeded before its validity ran out', false),
      Math.max(0, this.deadline - performance.now()),
    )
  }

  #lose(reason: string, gone: boolean): void {
    if (this.lost !== undefined || this.#stopped.signal.aborted) return
    this.lost = reason
    this.gone = gone
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    this.warn(`lockctl: run ${this.what}: lost the lock: ${reason}; stopping the command (SIGTERM now, SIGKILL after ${this.graceMs} ms)`)
    this.signalGroup('SIGTERM')
    this.#killTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.graceMs)
  }

  async #loop(): Promise<void> {
    const stopped = this.#stopped.signal
    // The first renew is due a third of the way into the window, counted from its anchor (the
    // request's send time), not from now: the acquire and starting CMD used some of it already.
    let delay = Math.max(0, this.deadline - (2 * this.validityMs) / 3 - performance.now())
    let failing = false
    while (!stopped.aborted) {
      try {
        await sleep(delay, undefined, { signal: stopped })
      } catch {
        return
      }
      const sent = performance.now()
      let reply: Reply | undefined
      let problem = ''
      try {
        reply = await this.client.request('PUT', `${this.path}/renew`, {
          token: this.token,
          timeoutMs: Math.min(REQUEST_TIMEOUT_MS, Math.max(50, this.deadline - sent)),
          signal: stopped,
        })
      } catch (err) {
        if (err instanceof AbortedError || stopped.aborted) return
        problem = err instanceof Error ? err.message : String(err)
      }
      if (stopped.aborted) return
      if (reply) {
        if (reply.status === 200 && isGrant(reply.body)) {
          this.deadline = sent + reply.body.validityMs
          this.#armDeadline()
          delay = reply.body.validityMs / 3
          if (failing) this.warn(`lockctl: run ${this.what}: renewed again`)
          failing = false
          continue
        }
        const err = errorOf(reply)
        const answer = `the renew answered ${reply.status} ${err.error} (${err.message})`
        if ([400, 401, 403, 404, 409].includes(reply.status)) return this.#lose(answer, reply.status === 404 || reply.status === 409)
        problem = answer
      }
      const left = this.deadline - performance.now()
      if (!failing) this.warn(`lockctl: run ${this.what}: renew failed: ${problem}; retrying for the ${Math.max(0, Math.round(left))} ms of validity left`)
      failing = true
      delay = Math.min(1000, Math.max(25, left / 4))
    }
  }
}
