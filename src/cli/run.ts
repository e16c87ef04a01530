import { spawn, type ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { parseDuration } from '../contract/duration.js'
import {
  AbortedError,
  errorOf,
  failure,
  isGrant,
  unreachable,
  UnreachableError,
  type LockServiceClient,
  type Grant,
  type Reply,
} from './client.js'
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
  /** The hold as a session lists it. */
  key: string
  kind: Options['mode']
  /** The run's session (POST /sessions), when the service has sessions: the hold is bound to it. */
  session?: string
  /** Its TTL. */
  sessionTtlMs?: number
}

/** How long a watch request waits on the service before lockctl asks again. */
const WATCH_WAIT_MS = 30_000
/** Bound on closing the run's session at the end. */
const SESSION_CLOSE_BUDGET_MS = 1_000

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
  const run: Run = { client, path: holdPath(o.mode, o.lockKey), context: `run ${describeHold(o)}`, warn, key: o.lockKey, kind: o.mode }
  const signals = new Signals(run)
  try {
    let lease: Lease
    try {
      Object.assign(run, await openSession(run, o, signals.interrupted))
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
    await closeSession(run)
  }
}

/**
 * One session for the run (its TTL: --ttl, else the service's default): the hold is bound to it, and
 * a keepalive renews it. A service without sessions (404 on POST /sessions): the hold is renewed on
 * its own, as before.
 */
async function openSession(run: Run, o: Options, interrupted: AbortSignal): Promise<Pick<Run, 'session' | 'sessionTtlMs'>> {
  const ttlMs = o.ttl === undefined ? undefined : parseDuration(o.ttl)
  const reply = await call(run.client, run.context, 'POST', '/sessions', {
    body: { ...(ttlMs === undefined ? {} : { ttlMs }), ...(o.owner === undefined ? {} : { owner: o.owner }) },
    timeoutMs: REQUEST_TIMEOUT_MS,
    signal: interrupted,
  })
  if (reply.status === 201 && typeof reply.body.id === 'string' && typeof reply.body.ttlMs === 'number') {
    return { session: reply.body.id, sessionTtlMs: reply.body.ttlMs }
  }
  if (reply.status === 404 && errorOf(reply).error === 'route_not_found') return {}
  throw failure(run.context, reply)
}

/** Ends the run's session (best effort: it lapses by itself otherwise). */
async function closeSession(run: Run): Promise<void> {
  if (run.session === undefined) return
  try {
    await run.client.request('DELETE', `/sessions/${run.session}`, { timeoutMs: SESSION_CLOSE_BUDGET_MS })
  } catch {
    // it lapses within its TTL
  }
}

/** A renewal's outcome: valid for validityMs from its send time, or why not (`gone`: the hold no longer exists or is not ours). */
type Renewal = { ok: true; validityMs: number } | { ok: false; answer: string; final: boolean; gone: boolean }

/**
 * Renews the hold: the run's session's keepalive (which renews every hold bound to it and says which
 * it still has), or the hold's own renew without a session.
 */
async function renewOnce(run: Run, token: string, timeoutMs: number, signal: AbortSignal): Promise<Renewal> {
  if (run.session !== undefined) {
    const reply = await run.client.request('PUT', `/sessions/${run.session}/keepalive`, { timeoutMs, signal })
    if (reply.status === 200 && typeof reply.body.validityMs === 'number') {
      const holds = Array.isArray(reply.body.holds) ? (reply.body.holds as { key?: unknown; kind?: unknown }[]) : []
      if (holds.some((h) => h.key === run.key && h.kind === run.kind)) return { ok: true, validityMs: reply.body.validityMs }
      // The session no longer has the hold: the hold's own renew says why (gone, or not ours).
    } else if (reply.status !== 404) {
      return renewalOf(reply, 'keepalive')
    }
  }
  const reply = await run.client.request('PUT', `${run.path}/renew`, { token, timeoutMs, signal })
  if (reply.status === 200 && isGrant(reply.body)) return { ok: true, validityMs: reply.body.validityMs }
  return renewalOf(reply, 'renew')
}

function renewalOf(reply: Reply, what: 'renew' | 'keepalive'): Renewal {
  const err = errorOf(reply)
  const answer = `the ${what} answered ${reply.status} ${err.error} (${err.message})`
  return { ok: false, answer, final: [400, 401, 403, 404, 409].includes(reply.status), gone: reply.status === 404 || reply.status === 409 }
}

/**
 * Acquires the hold, ready for CMD. A signal meanwhile abandons it (AbortedError); a grant that raced
 * the signal, or that cannot be used, is released.
 */
async function acquire(run: Run, o: Options, interrupted: AbortSignal): Promise<Lease> {
  const sent = performance.now()
  // A wait in line may outlast the session's TTL: it is kept alive meanwhile.
  const waiting = new AbortController()
  const keepingAlive = run.session === undefined || o.waitMs === 0 ? undefined : keepAliveWhileWaiting(run, waiting.signal)
  let grant: Grant
  try {
    grant = await requestGrant(run.client, run.context, o, interrupted, run.session)
  } finally {
    waiting.abort()
    await keepingAlive
  }
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

/** Keeps the run's session alive while its acquire waits in line (every third of its TTL). */
async function keepAliveWhileWaiting(run: Run, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    try {
      await sleep((run.sessionTtlMs ?? 3000) / 3, undefined, { signal: stop })
      await run.client.request('PUT', `/sessions/${run.session}/keepalive`, { timeoutMs: REQUEST_TIMEOUT_MS, signal: stop })
    } catch {
      // stopped, or a failure the acquire itself will meet
    }
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
  let renewed: Renewal
  try {
    renewed = await renewOnce(run, grant.token, REQUEST_TIMEOUT_MS, interrupted)
  } catch (err) {
    if (err instanceof UnreachableError) throw unreachable(run.context, err)
    throw err
  }
  if (renewed.ok) return { grant, deadline: renewSent + renewed.validityMs, validityMs: renewed.validityMs }
  if (renewed.gone) {
    throw new CliError(
      EXIT.notObtained,
      `${run.context}: the lock was granted after a wait but lapsed before it could be used (${renewed.answer})`,
    )
  }
  throw new CliError(EXIT.unavailable, `${run.context}: ${renewed.answer}`)
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
  void watchHold(run, lease.grant.token, keeper)
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

  /** Aborted when the keeper stops (CMD exited, or the lock was lost). */
  get stopped(): AbortSignal {
    return this.#stopped.signal
  }

  /** The service said the hold is gone (the watch): stop CMD now rather than at the next renewal. */
  gone(reason: string): void {
    this.#lose(reason, true)
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
      let renewal: Renewal | undefined
      let problem = ''
      try {
        renewal = await renewOnce(
          this.run,
          this.lease.grant.token,
          Math.min(REQUEST_TIMEOUT_MS, Math.max(50, this.#deadline - sent)),
          stopped,
        )
      } catch (err) {
        if (err instanceof AbortedError || stopped.aborted) return
        problem = err instanceof Error ? err.message : String(err)
      }
      if (stopped.aborted) return
      if (renewal) {
        if (renewal.ok) {
          this.#deadline = sent + renewal.validityMs
          this.#armDeadline()
          delay = renewal.validityMs / 3
          if (failing) this.run.warn(`lockctl: ${this.run.context}: renewed again`)
          failing = false
          continue
        }
        if (renewal.final) return this.#lose(renewal.answer, renewal.gone)
        problem = renewal.answer
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

/**
 * The lost-lock signal: a long poll on the hold's watch route (GET …/watch) for as long as CMD runs.
 * When the service says the hold is gone (released elsewhere, force-released by an operator, its
 * session lost, expired), CMD is stopped at once (exit 70) instead of at the next renewal. A service
 * without watches (404), or a refused watch, leaves the renewals to find out.
 */
async function watchHold(run: Run, token: string, keeper: Keeper): Promise<void> {
  const stopped = keeper.stopped
  while (!stopped.aborted) {
    let reply: Reply
    try {
      reply = await run.client.request('GET', `${run.path}/watch`, {
        token,
        query: { wait: `${WATCH_WAIT_MS}ms` },
        timeoutMs: WATCH_WAIT_MS + REQUEST_TIMEOUT_MS,
        signal: stopped,
      })
    } catch {
      if (stopped.aborted) return
      await sleep(1000, undefined, { signal: stopped }).catch(() => undefined)
      continue
    }
    if (stopped.aborted) return
    if (reply.status === 200 && reply.body.held === false) {
      keeper.gone(`the service says it was ${String(reply.body.reason)} at ${String(reply.body.at)}`)
      return
    }
    if (reply.status === 200) continue
    if (reply.status !== 503 && reply.status !== 429) return
    await sleep(1000, undefined, { signal: stopped }).catch(() => undefined)
  }
}
