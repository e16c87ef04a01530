/** The hold of one `lockctl run` as the service sees it: the run it belongs to, its lease, renewing and releasing it. */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { errorOf, type Grant, type LockServiceClient, type Reply } from './client.js'
import { REQUEST_TIMEOUT_MS } from './commands.js'

/** Bound on the release after CMD exits (all attempts together). */
const RELEASE_BUDGET_MS = 5_000

/** The same after the lock was lost: a courtesy that must not hold up the exit for long. */
export const LOST_RELEASE_BUDGET_MS = 1_000

/** What one `lockctl run` works on, and how its messages name it ("run KEY"). */
export interface Run {
  client: LockServiceClient
  path: string
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
  grant: Grant
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
 * it still has), or the hold's own renew without a session.
 */
export async function renewOnce(run: Run, token: string, timeoutMs: number, signal: AbortSignal): Promise<Renewal> {
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
  // A lock's renew answers a grant, an election's its leadership: both say how long it is valid.
  if (reply.status === 200 && typeof reply.body.validityMs === 'number') return { ok: true, validityMs: reply.body.validityMs }
  return renewalOf(reply, 'renew')
}

function renewalOf(reply: Reply, what: 'renew' | 'keepalive'): Renewal {
  const err = errorOf(reply)
  const answer = `the ${what} answered ${reply.status} ${err.error} (${err.message})`
  return { ok: false, answer, final: [400, 401, 403, 404, 409].includes(reply.status), gone: reply.status === 404 || reply.status === 409 }
}

/**
 * DELETE the hold, retrying transient failures (network, 503) within `budgetMs`. Resolves to the
 * last reply, or to a description of the last network failure.
 */
export async function releaseHold(run: Run, token: string, budgetMs = RELEASE_BUDGET_MS): Promise<Reply | string> {
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
