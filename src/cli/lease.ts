/** The hold of one `lockctl run` as the service sees it: the run it belongs to, its lease, renewing and releasing it. */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { BackendUnavailableError, LockServiceError, type Client, type WatchEvent, type WatchOptions } from '@lock-service/client'
import type { Options } from './args.js'
import { describeAnswer } from './answers.js'
import { REQUEST_TIMEOUT_MS, type AnyGrant } from './commands.js'

/** Bound on the release after CMD exits (all attempts together). */
const RELEASE_BUDGET_MS = 5_000

/** The same after the lock was lost: a courtesy that must not hold up the exit for long. */
export const LOST_RELEASE_BUDGET_MS = 1_000

/**
 * What keeping a hold needs of its routes: a lock's (the client's HoldRoutes) or an election's
 * leadership (renew, resign, watch).
 */
export interface KeptRoutes {
  renew(key: string, token: string, options: { timeoutMs?: number; signal?: AbortSignal }): Promise<{ validityMs: number }>
  release(key: string, token: string, options: { timeoutMs?: number }): Promise<object>
  watch(key: string, token: string, options: WatchOptions): Promise<WatchEvent>
}

/** What keeping a hold needs of its grant (a lock's, or a leadership whose fence is its term). */
export type LeaseGrant = Pick<AnyGrant, 'token' | 'fence' | 'ttlMs' | 'validityMs'>

/** What one `lockctl run` works on, and how its messages name it ("run KEY"). */
export interface Run {
  client: Client
  routes: KeptRoutes
  context: string
  warn: (line: string) => void
  /** The hold as a session lists it. */
  key: string
  kind: Options['mode'] | 'leader'
  /** The run's session (POST /sessions), when the service has sessions: the hold is bound to it. */
  session?: string
  /** Its TTL. */
  sessionTtlMs?: number
}

/** The hold, and until when (performance.now()) its last grant or renew is valid. */
export interface Lease {
  grant: LeaseGrant
  deadline: number
  validityMs: number
}

/** Why the lock was lost; `gone`: the service said the hold no longer exists or is not ours (nothing to release). */
export interface Lost {
  reason: string
  gone: boolean
}

/** A renewal's outcome: valid for validityMs from its send time, or why not (`gone`: the hold no longer exists or is not ours). */
export type Renewal = { ok: true; validityMs: number } | { ok: false; answer: string; final: boolean; gone: boolean }

/**
 * Renews the hold: the run's session's keepalive (which renews every hold bound to it and says which
 * it still has), or the hold's own renew without a session. A transport failure rejects (the caller
 * retries while the validity lasts).
 */
export async function renewOnce(run: Run, token: string, timeoutMs: number, signal: AbortSignal): Promise<Renewal> {
  if (run.session !== undefined) {
    try {
      const alive = await run.client.sessions.keepalive(run.session, { timeoutMs, signal })
      if (alive.holds.some((h) => h.key === run.key && h.kind === run.kind)) return { ok: true, validityMs: alive.validityMs }
      // The session no longer has the hold: the hold's own renew says why (gone, or not ours).
    } catch (err) {
      if (!(err instanceof LockServiceError) || err.status === 0) throw err
      if (err.status !== 404) return renewalOf(err, 'keepalive')
    }
  }
  try {
    const renewed = await run.routes.renew(run.key, token, { timeoutMs, signal })
    return { ok: true, validityMs: renewed.validityMs }
  } catch (err) {
    if (!(err instanceof LockServiceError) || err.status === 0) throw err
    return renewalOf(err, 'renew')
  }
}

function renewalOf(err: LockServiceError, what: 'renew' | 'keepalive'): Renewal {
  const answer = `the ${what} answered ${describeAnswer(err)}`
  return { ok: false, answer, final: [400, 401, 403, 404, 409].includes(err.status), gone: err.status === 404 || err.status === 409 }
}

/**
 * DELETE the hold, retrying transient failures (network, 503) within `budgetMs`. Resolves to the
 * answer, the service's error, or a description of the last network failure.
 */
export async function releaseHold(run: Run, token: string, budgetMs = RELEASE_BUDGET_MS): Promise<object | string> {
  const until = performance.now() + budgetMs
  let last: LockServiceError | string = 'not attempted'
  for (let attempt = 0; ; attempt++) {
    const left = until - performance.now()
    if (left < 50) return last
    try {
      return await run.routes.release(run.key, token, { timeoutMs: Math.min(left, REQUEST_TIMEOUT_MS) })
    } catch (err) {
      if (err instanceof BackendUnavailableError) last = err
      else if (err instanceof LockServiceError && err.status !== 0) return err
      else last = err instanceof Error ? err.message : String(err)
    }
    await sleep(Math.min(100 * 2 ** attempt, 1000))
  }
}
