/**
 * `lockctl elect NAME --candidate ID -- CMD`: campaign, run CMD only while leader (LOCK_NAME, LOCK_TERM,
 * LOCK_TOKEN, LOCK_CANDIDATE in its environment), stop it the moment leadership is lost, resign when it
 * exits; with --requeue, campaign again after each term. Leadership is an exclusive hold whose fence is
 * the term, so `run`'s machinery keeps it: its session, re-anchoring, keeper (renewals and the watch),
 * process group and release.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { LockHeldError, type Client } from '@lock-service/client'
import type { Options } from './args.js'
import { call } from './answers.js'
import { ttlMsOf } from './commands.js'
import { CliError, EXIT } from './exit.js'
import type { KeptRoutes, Lease, Run } from './lease.js'
import { closeSession, finish, obtainLease, openSession, runCommand } from './run.js'
import { FORWARDED_SIGNALS, signalExitCode, Signals } from './signals.js'

/** --requeue: pauses before campaigning again after a refusal (held, too many waiters) and after the service failed. */
const HELD_PAUSE_MS = 500
const MAX_FAILING_PAUSE_MS = 5_000

/** A leadership kept as a lock is: renewed, resigned, watched. */
function leadershipRoutes(client: Client): KeptRoutes {
  return {
    renew: (name, token, options) => client.elections.renew(name, token, { timeoutMs: options.timeoutMs }),
    release: (name, token, options) => client.elections.resign(name, token, options),
    watch: (name, token, options) => client.elections.watch(name, token, options),
  }
}

export async function elect(client: Client, o: Options, warn: (line: string) => void): Promise<number> {
  const routes = leadershipRoutes(client)
  const run: Run = { client, routes, context: `elect ${o.lockKey}`, warn, key: o.lockKey, kind: 'leader' }
  const signals = new Signals(run)
  // A signal while CMD runs is forwarded to it; it also means: no further campaign.
  let signalled = false
  const onSignal = (): void => {
    signalled = true
  }
  for (const s of FORWARDED_SIGNALS) process.on(s, onSignal)
  try {
    for (let failures = 0; ;) {
      let lease: Lease
      try {
        Object.assign(run, await openSession(run, { ...o, owner: o.candidate }, signals.interrupted))
        lease = await campaign(run, o, signals.interrupted)
        failures = 0
      } catch (err) {
        if (signals.interrupted.aborted) {
          warn(`lockctl: ${run.context}: interrupted by ${signals.first} while campaigning`)
          return signalExitCode(signals.first)
        }
        const pause = o.requeue ? pauseBeforeRetry(err, failures++) : undefined
        if (pause === undefined) throw err
        if (failures === 1 || (err as CliError).code !== EXIT.notObtained) warn(`lockctl: ${(err as CliError).message}; campaigning again`)
        await endSession(run)
        await sleep(pause, undefined, { signal: signals.interrupted }).catch(() => undefined)
        continue
      }
      const ended = await runCommand(run, o, lease, signals, electionEnv(o, lease))
      const code = await finish(run, lease.grant, ended, signals)
      signals.child = undefined // from now on a signal interrupts the next campaign
      await endSession(run)
      if (!o.requeue || signalled) return code
      const how = ended.lost ? 'leadership was lost' : `CMD exited ${ended.code ?? ended.signal}`
      warn(`lockctl: ${run.context}: term ${lease.grant.fence} is over (${how}); campaigning again`)
    }
  } finally {
    for (const s of FORWARDED_SIGNALS) process.off(s, onSignal)
    signals.close()
    await endSession(run)
  }
}

async function endSession(run: Run): Promise<void> {
  await closeSession(run)
  delete run.session
  delete run.sessionTtlMs
}

/** --requeue: how long to pause before campaigning again after `err`, or undefined when retrying cannot help. */
function pauseBeforeRetry(err: unknown, failures: number): number | undefined {
  if (!(err instanceof CliError)) return undefined
  if (err.code === EXIT.notObtained) return HELD_PAUSE_MS
  if (err.code === EXIT.unavailable) return Math.min(MAX_FAILING_PAUSE_MS, 250 * 2 ** failures)
  return undefined
}

/** What CMD learns of its leadership. */
function electionEnv(o: Options, lease: Lease): Record<string, string> {
  return {
    LOCK_NAME: o.lockKey,
    LOCK_TERM: String(lease.grant.fence),
    LOCK_TOKEN: lease.grant.token,
    LOCK_CANDIDATE: o.candidate ?? '',
  }
}

/**
 * Campaigns, waiting in line up to --wait (the session kept alive meanwhile): the leadership as a
 * lease whose fence is the term, re-anchored after a long wait. A signal meanwhile abandons it
 * (AbortedError); a leadership that raced the signal, or that cannot be used, is resigned.
 */
function campaign(run: Run, o: Options, interrupted: AbortSignal): Promise<Lease> {
  const campaigning = () =>
    run.client.elections
      .campaign(run.key, {
        candidate: o.candidate ?? '',
        value: o.value,
        ttlMs: run.session === undefined ? ttlMsOf(o) : undefined,
        waitMs: o.waitMs,
        session: run.session,
        retryBudgetMs: 0,
        signal: interrupted,
      })
      .catch((err: unknown) => {
        throw err instanceof LockHeldError ? heldBy(run.context, err.details) : err
      })
  return obtainLease(run, o, interrupted, async () => {
    // The term is the leadership's fence.
    const { term, token, ttlMs, validityMs } = await call(run.context, campaigning, interrupted)
    return { fence: term, token, ttlMs, validityMs }
  })
}

/** 409 lock_held: who leads (the body's leader), after how long a wait. */
function heldBy(context: string, body: Readonly<Record<string, unknown>>): CliError {
  const leader = (body.leader ?? null) as { candidate?: unknown; term?: unknown } | null
  const who = leader && typeof leader.candidate === 'string' ? ` by ${leader.candidate} (term ${String(leader.term)})` : ''
  const waited = typeof body.waitedMs === 'number' ? ` after waiting ${body.waitedMs} ms` : ''
  return new CliError(EXIT.notObtained, `${context}: led${who}${waited} (lock_held)`)
}
