import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { LockServiceError, type Client } from '@lock-service/client'
import { call, describeAnswer, failure } from './answers.js'
import { describeHold, REQUEST_TIMEOUT_MS, requestGrant, routesOf, ttlMsOf } from './commands.js'
import { CliError, EXIT } from './exit.js'
import { Keeper, watchHold } from './keeper.js'
import { LOST_RELEASE_BUDGET_MS, releaseHold, renewOnce, type Lease, type LeaseGrant, type Lost, type Renewal, type Run } from './lease.js'
import { signalExitCode, Signals } from './signals.js'

/** Bound on closing the run's session at the end. */
const SESSION_CLOSE_BUDGET_MS = 1_000

/** How CMD ended, and whether the lock was kept until then. */
export interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  lost: Lost | undefined
}

/**
 * `lockctl run KEY -- CMD...`: acquire, run CMD in its own process group with LOCK_KEY / LOCK_FENCE /
 * LOCK_TOKEN in its environment, renew every third of the validity, stop CMD when the lock is lost,
 * release when CMD exits. Resolves to lockctl's exit code.
 */
export async function runLocked(client: Client, o: Options, warn: (line: string) => void): Promise<number> {
  const routes = routesOf(client, o.mode)
  const run: Run = { client, routes, context: `run ${describeHold(o)}`, warn, key: o.lockKey, kind: o.mode }
  const signals = new Signals(run)
  try {
    let lease: Lease
    try {
      Object.assign(run, await openSession(run, o, signals.interrupted))
      lease = await acquire(run, o, signals.interrupted)
    } catch (err) {
      if (!signals.interrupted.aborted) throw err
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
export async function openSession(run: Run, o: Options, interrupted: AbortSignal): Promise<Pick<Run, 'session' | 'sessionTtlMs'>> {
  const ttlMs = ttlMsOf(o)
  const open = () =>
    run.client.sessions.open({ ttlMs, owner: o.owner }).catch((err: unknown) => {
      if (err instanceof LockServiceError && err.code === 'route_not_found') return undefined
      throw err
    })
  const opened = await call(run.context, open, interrupted)
  return opened ? { session: opened.id, sessionTtlMs: opened.ttlMs } : {}
}

/** Ends the run's session (best effort: it lapses by itself otherwise). */
export async function closeSession(run: Run): Promise<void> {
  if (run.session === undefined) return
  try {
    await run.client.sessions.close(run.session, { timeoutMs: SESSION_CLOSE_BUDGET_MS })
  } catch {
    // it lapses within its TTL
  }
}

/**
 * Acquires the hold, ready for CMD. A signal meanwhile abandons it (AbortedError); a grant that raced
 * the signal, or that cannot be used, is released.
 */
function acquire(run: Run, o: Options, interrupted: AbortSignal): Promise<Lease> {
  return obtainLease(run, o, interrupted, () => requestGrant(run.client, run.context, o, interrupted, run.session))
}

/**
 * Asks for a hold with `request` (waiting in line up to --wait, the run's session kept alive meanwhile) and
 * re-anchors it: the lease, ready for CMD. A grant that raced the signal, or that cannot be used, is released.
 */
export async function obtainLease(run: Run, o: Options, interrupted: AbortSignal, request: () => Promise<LeaseGrant>): Promise<Lease> {
  const sent = performance.now()
  // A wait in line may outlast the session's TTL: it is kept alive meanwhile.
  const waiting = new AbortController()
  const keepingAlive = run.session === undefined || o.waitMs === 0 ? undefined : keepAliveWhileWaiting(run, waiting.signal)
  let grant: LeaseGrant
  try {
    grant = await request()
  } finally {
    waiting.abort()
    await keepingAlive
  }
  let ready = false
  try {
    const lease = await reanchor(run, grant, sent, interrupted)
    if (interrupted.aborted) throw new Error('interrupted')
    ready = true
    return lease
  } finally {
    if (!ready) await releaseHold(run, grant.token)
  }
}

/** Keeps the run's session alive while its acquire waits in line (every third of its TTL). */
export async function keepAliveWhileWaiting(run: Run, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    try {
      await sleep((run.sessionTtlMs ?? 3000) / 3, undefined, { signal: stop })
      await run.client.sessions.keepalive(run.session ?? '', { timeoutMs: REQUEST_TIMEOUT_MS, signal: stop })
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
export async function reanchor(run: Run, grant: LeaseGrant, sent: number, interrupted: AbortSignal): Promise<Lease> {
  if (performance.now() - sent <= grant.validityMs / 3) return { grant, deadline: sent + grant.validityMs, validityMs: grant.validityMs }
  const renewSent = performance.now()
  let renewed: Renewal
  try {
    renewed = await renewOnce(run, grant.token, REQUEST_TIMEOUT_MS, interrupted)
  } catch (err) {
    if (interrupted.aborted) throw err
    throw failure(run.context, err)
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

/** What CMD learns of its lock: LOCK_KEY, LOCK_FENCE, LOCK_TOKEN (and LOCK_PERMITS). */
function lockEnv(o: Options, lease: Lease): Record<string, string> {
  const env: Record<string, string> = { LOCK_KEY: o.lockKey, LOCK_FENCE: String(lease.grant.fence), LOCK_TOKEN: lease.grant.token }
  if (o.permits) env.LOCK_PERMITS = String(o.permits.permits)
  return env
}

/**
 * Runs CMD in its own process group (so that stopping it reaches its children too), keeping the hold
 * until it exits; `holdEnv` is what CMD learns of the hold (a lock's by default).
 */
export async function runCommand(run: Run, o: Options, lease: Lease, signals: Signals, holdEnv = lockEnv(o, lease)): Promise<Ended> {
  const [file, ...args] = o.cmd as [string, ...string[]]
  const env: NodeJS.ProcessEnv = { ...process.env, ...holdEnv }
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
export async function finish(run: Run, grant: LeaseGrant, ended: Ended, signals: Signals): Promise<number> {
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
  } else if (released instanceof LockServiceError && (released.status === 404 || released.status === 409)) {
    run.warn(`lockctl: ${run.context}: lost the lock before CMD finished: at release the service answered ${describeAnswer(released)}`)
    return EXIT.lockLost
  } else if (released instanceof LockServiceError) {
    notReleased(`${released.status} ${released.code}: ${released.message}`)
  }
  return ended.code ?? signalExitCode(ended.signal)
}
