import { spawn, type ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { AbortedError, errorOf, failure, isGrant, type LockServiceClient, type Grant, type Reply } from './client.js'
import { call, describeHold, holdPath, REQUEST_TIMEOUT_MS, requestGrant } from './commands.js'
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

/** What one `lockctl run` works on, and how its messages name it ("run KEY"). */
interface Run {
  client: LockServiceClient
  path: string
  context: string
  warn: (line: string) => void
}

/** The hold, and until when (performance.now()) its last grant or renew is valid. */
interface Lease {
  grant: Grant
  deadline: number
  validityMs: number
}

/** Why the lock was lost; `gone`: the service said the hold no longer exists or is not ours (nothing to release). */
interface Lost {
  reason: string
  gone: boolean
}

/** How CMD ended, and whether the lock was kept until then. */
interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  lost: Lost | undefined
}

/**
 * `lockctl run KEY -- CMD...`: acquire, run CMD in its own process group with LOCK_KEY / LOCK_FENCE /
 * LOCK_TOKEN in its environment, renew every third of the validity, stop CMD when the lock is lost,
 * release when CMD exits. Resolves to lockctl's exit code.
 */
export async function runLocked(client: LockServiceClient, o: Options, warn: (line: string) => void): Promise<number> {
  const run: Run = { client, path: holdPath(o.mode, o.lockKey), context: `run ${describeHold(o)}`, warn }
  const signals = new Signals(run)
  try {
    let lease: Lease
    try {
      lease = await acquire(run, o, signals.interrupted)
    } catch (err) {
      if (!(err instanceof AbortedError)) throw err
      warn(`lockctl: ${run.context}: interrupted by ${signals.first} while acquiring`)
      return signalExitCode(signals.first)
    }
    const ended = await runCommand(run, o, lease, signals)
    return await finish(run, lease.grant, ended, signals)
  } finally {
    signals.close()
  }
}

/**
 * Acquires the hold, ready for CMD. A signal meanwhile abandons it (AbortedError); a grant that raced
 * the signal, or that cannot be used, is released.
 */
async function acquire(run: Run, o: Options, interrupted: AbortSignal): Promise<Lease> {
  const sent = performance.now()
  const grant = await requestGrant(run.client, run.context, o, interrupted)
  let ready = false
  try {
    const lease = await reanchor(run, grant, sent, interrupted)
    if (interrupted.aborted) throw new AbortedError('aborted')
    ready = true
    return lease
  } finally {
    if (!ready) await releaseHold(run, grant.token)
  }
}

/**
 * validityMs counts from when the service decided the grant, which lockctl only knows to lie between
 * sending the request and receiving the answer: it takes the earlier. After a long wait in line that
 * would leave little of the window, so a renew (which does not wait: its own send time is a close
 * bound) re-anchors it before CMD starts.
 */
async function reanchor(run: Run, grant: Grant, sent: number, interrupted: AbortSignal): Promise<Lease> {
  if (performance.now() - sent <= grant.validityMs / 3) return { grant, deadline: sent + grant.validityMs, validityMs: grant.validityMs }
  const renewSent = performance.now()
  const reply = await call(run.client, run.context, 'PUT', `${run.path}/renew`, {
    token: grant.token,
    timeoutMs: REQUEST_TIMEOUT_MS,
    signal: interrupted,
  })
  if (reply.status === 200 && isGrant(reply.body))
    return { grant, deadline: renewSent + reply.body.validityMs, validityMs: reply.body.validityMs }
  if (reply.status === 404 || reply.status === 409) {
    throw new CliError(
      EXIT.notObtained,
      `${run.context}: the lock was granted after a wait but lapsed before it could be used (${errorOf(reply).error})`,
    )
  }
  throw failure(run.context, reply)
}

/** Runs CMD in its own process group (so that stopping it reaches its children too), keeping the lock until it exits. */
async function runCommand(run: Run, o: Options, lease: Lease, signals: Signals): Promise<Ended> {
  const [file, ...args] = o.cmd as [string, ...string[]]
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOCK_KEY: o.lockKey,
    LOCK_FENCE: String(lease.grant.fence),
    LOCK_TOKEN: lease.grant.token,
  }
  if (o.permits) env.LOCK_PERMITS = String(o.permits.permits)
  const child = spawn(file, args, { stdio: 'inherit', env, detached: true })
  signals.child = child
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  const spawnError = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    child.once('spawn', () => resolve(null))
    child.once('error', (err) => resolve(err))
  })
  if (spawnError) {
    signals.child = undefined
    await releaseHold(run, lease.grant.token)
    const notFound = spawnError.code === 'ENOENT'
    throw new CliError(
      notFound ? EXIT.notFound : EXIT.cannotExecute,
      `${run.context}: cannot run ${JSON.stringify(file)}: ${notFound ? 'command not found' : (spawnError.code ?? spawnError.message)}`,
    )
  }
  const keeper = new Keeper(run, lease, o.graceMs, (signal) => signals.toGroup(signal))
  keeper.start()
  const { code, signal } = await exited
  return { code, signal, lost: keeper.stop() }
}

/** After CMD: release the lock (if it was kept) and say how it went; resolves to lockctl's exit code. */
async function finish(run: Run, grant: Grant, ended: Ended, signals: Signals): Promise<number> {
  if (ended.lost) {
    signals.toGroup('SIGKILL', true) // whatever is left of CMD's group has no lock either
    if (!ended.lost.gone) await releaseHold(run, grant.token, LOST_RELEASE_BUDGET_MS)
    return EXIT.lockLost
  }
  const released = await releaseHold(run, grant.token)
  const notReleased = (why: string): void =>
    run.warn(`lockctl: ${run.context}: could not release the lock (${why}); it expires within ${grant.ttlMs} ms`)
  if (typeof released === 'string') {
    notReleased(released)
  } else if (released.status === 404 || released.status === 409) {
    const err = errorOf(released)
    run.warn(
      `lockctl: ${run.context}: lost the lock before CMD finished: at release the service answered ${released.status} ${err.error} (${err.message})`,
    )
    return EXIT.lockLost
  } else if (released.status !== 200) {
    const err = errorOf(released)
    notReleased(`${released.status} ${err.error}: ${err.message}`)
  }
  return ended.code ?? signalExitCode(ended.signal)
}

/**
 * lockctl's own signals during a run. Before CMD exists a signal abandons the acquire (`interrupted`;
 * the service rolls back a grant that races a hang-up); afterwards it is forwarded to CMD's process
 * group. SIGTSTP is ignored: Ctrl-Z would stop lockctl (and its renewals) but not CMD, which has its
 * own session, and the lock would lapse under a running CMD. If lockctl itself dies (an unexpected
 * error), CMD's group gets SIGTERM: it must not carry on without renewals.
 */
class Signals {
  readonly #interrupted = new AbortController()
  readonly interrupted = this.#interrupted.signal
  /** The first signal, when it came before CMD started. */
  first: NodeJS.Signals | undefined
  child: ChildProcess | undefined

  constructor(readonly run: Run) {
    for (const s of FORWARDED_SIGNALS) process.on(s, this.#onSignal)
    process.on('SIGTSTP', this.#onStop)
    process.on('exit', this.#onExit)
  }

  /**
   * Signals CMD's process group; `evenAfterExit`: also when CMD itself has exited, for what is left
   * of its group (its pid, the group id, cannot be reused while any member lives).
   */
  toGroup(signal: NodeJS.Signals, evenAfterExit = false): void {
    const child = this.child
    if (child?.pid === undefined) return
    if (!evenAfterExit && (child.exitCode !== null || child.signalCode !== null)) return
    try {
      process.kill(-child.pid, signal)
    } catch {
      // the group is gone already
    }
  }

  close(): void {
    for (const s of FORWARDED_SIGNALS) process.off(s, this.#onSignal)
    process.off('SIGTSTP', this.#onStop)
    process.off('exit', this.#onExit)
  }

  readonly #onSignal = (signal: NodeJS.Signals): void => {
    if (this.child) {
      this.toGroup(signal)
      return
    }
    this.first ??= signal
    this.#interrupted.abort()
  }

  readonly #onStop = (): void =>
    this.run.warn(`lockctl: ${this.run.context}: ignoring SIGTSTP (CMD runs under a lock that must keep being renewed)`)

  readonly #onExit = (): void => this.toGroup('SIGTERM')
}

/**
 * DELETE the hold, retrying transient failures (network, 503) within `budgetMs`. Resolves to the
 * last reply, or to a description of the last network failure.
 */
async function releaseHold(run: Run, token: string, budgetMs = RELEASE_BUDGET_MS): Promise<Reply | string> {
  const until = performance.now() + budgetMs
  let last: Reply | string = 'not attempted'
  for (let attempt = 0; ; attempt++) {
    const left = until - performance.now()
    if (left < 50) return last
    try {
      last = await run.client.request('DELETE', run.path, { token, timeoutMs: Math.min(left, REQUEST_TIMEOUT_MS) })
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
  #deadline: number
  #lost: Lost | undefined
  readonly #stopped = new AbortController()
  #deadlineTimer: NodeJS.Timeout | undefined
  #killTimer: NodeJS.Timeout | undefined

  constructor(
    readonly run: Run,
    readonly lease: Lease,
    readonly graceMs: number,
    readonly signalGroup: (signal: NodeJS.Signals) => void,
  ) {
    this.#deadline = lease.deadline
  }

  start(): void {
    this.#armDeadline()
    this.#loop().catch((err: unknown) =>
      this.#lose(`renewing failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`, false),
    )
  }

  /** Stops renewing: why the lock was lost, if it was (a validity that has run out by now counts). */
  stop(): Lost | undefined {
    if (this.#lost === undefined && performance.now() > this.#deadline) {
      this.#lost = { reason: 'its validity ran out just as CMD exited', gone: false }
      this.run.warn(`lockctl: ${this.run.context}: lost the lock: ${this.#lost.reason}`)
    }
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    clearTimeout(this.#killTimer)
    return this.#lost
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer)
    this.#deadlineTimer = setTimeout(
      () => this.#lose('no renewal succeeded before its validity ran out', false),
      Math.max(0, this.#deadline - performance.now()),
    )
  }

  #lose(reason: string, gone: boolean): void {
    if (this.#lost !== undefined || this.#stopped.signal.aborted) return
    this.#lost = { reason, gone }
    this.#stopped.abort()
    clearTimeout(this.#deadlineTimer)
    this.run.warn(
      `lockctl: ${this.run.context}: lost the lock: ${reason}; stopping the command (SIGTERM now, SIGKILL after ${this.graceMs} ms)`,
    )
    this.signalGroup('SIGTERM')
    this.#killTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.graceMs)
  }

  async #loop(): Promise<void> {
    const stopped = this.#stopped.signal
    // The first renew is due a third of the way into the window, counted from its anchor (the
    // request's send time), not from now: the acquire and starting CMD used some of it already.
    let delay = Math.max(0, this.#deadline - (2 * this.lease.validityMs) / 3 - performance.now())
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
        reply = await this.run.client.request('PUT', `${this.run.path}/renew`, {
          token: this.lease.grant.token,
          timeoutMs: Math.min(REQUEST_TIMEOUT_MS, Math.max(50, this.#deadline - sent)),
          signal: stopped,
        })
      } catch (err) {
        if (err instanceof AbortedError || stopped.aborted) return
        problem = err instanceof Error ? err.message : String(err)
      }
      if (stopped.aborted) return
      if (reply) {
        if (reply.status === 200 && isGrant(reply.body)) {
          this.#deadline = sent + reply.body.validityMs
          this.#armDeadline()
          delay = reply.body.validityMs / 3
          if (failing) this.run.warn(`lockctl: ${this.run.context}: renewed again`)
          failing = false
          continue
        }
        const err = errorOf(reply)
        const answer = `the renew answered ${reply.status} ${err.error} (${err.message})`
        if ([400, 401, 403, 404, 409].includes(reply.status)) return this.#lose(answer, reply.status === 404 || reply.status === 409)
        problem = answer
      }
      const left = this.#deadline - performance.now()
      if (!failing)
        this.run.warn(
          `lockctl: ${this.run.context}: renew failed: ${problem}; retrying for the ${Math.max(0, Math.round(left))} ms of validity left`,
        )
      failing = true
      delay = Math.min(1000, Math.max(25, left / 4))
    }
  }
}
