/** `lockctl leader NAME` (who leads now) and `lockctl observe NAME` (each change, one line each). */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Options } from './args.js'
import { AbortedError, errorOf, failure, type LockServiceClient, type Reply, UnreachableError } from './client.js'
import { call, type Print, REQUEST_TIMEOUT_MS } from './commands.js'
import { electionPath } from './elect.js'
import { CliError, EXIT } from './exit.js'

/** How long one observe request waits for a change before lockctl asks again. */
const OBSERVE_WAIT_MS = 30_000
const RETRY_PAUSE_MS = 1_000
const LAGGING_PAUSE_MS = 100

interface Leader {
  candidate: string
  value: string | null
  term: number
  revision?: number
  since?: string
  remainingMs?: number
}

export async function leader(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const context = `leader ${o.lockKey}`
  const reply = await call(client, context, 'GET', electionPath(o.lockKey), { timeoutMs: REQUEST_TIMEOUT_MS })
  if (reply.status === 404 && errorOf(reply).error === 'lock_not_found') throw new CliError(EXIT.failed, `${context}: no leader`)
  if (reply.status !== 200) throw failure(context, reply)
  const current = leaderOf(context, reply.body)
  if (current === null) throw new CliError(EXIT.failed, `${context}: no leader (after term ${String(reply.body.term)})`)
  if (o.json) {
    print(JSON.stringify(current))
  } else {
    const value = current.value === null ? '' : ` value=${current.value}`
    print(`${current.candidate} term=${current.term} since=${current.since ?? '-'} remainingMs=${current.remainingMs ?? '-'}${value}`)
  }
  return EXIT.ok
}

/** What an observer was last shown. */
interface State {
  term: number
  revision: number
  leader: Leader | null
}

/**
 * Long-polls GET …/observe?after=&revision=, printing a line for each change it is shown (the first
 * answer: the current state). Unreachable, 503 and 429 are retried (said once per outage); a signal
 * (SIGINT, SIGTERM) ends it with 0.
 */
export async function observe(client: LockServiceClient, o: Options, print: Print, warn: (line: string) => void): Promise<number> {
  const context = `observe ${o.lockKey}`
  const stop = new AbortController()
  const onSignal = (): void => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  let shown: State | undefined
  let failing = false
  try {
    while (!stop.signal.aborted) {
      let reply: Reply
      try {
        reply = await client.request('GET', `${electionPath(o.lockKey)}/observe`, {
          query: shown ? { after: shown.term, revision: shown.revision, wait: `${OBSERVE_WAIT_MS}ms` } : {},
          timeoutMs: OBSERVE_WAIT_MS + REQUEST_TIMEOUT_MS,
          signal: stop.signal,
        })
      } catch (err) {
        if (err instanceof AbortedError) break
        if (!(err instanceof UnreachableError)) throw err
        failing = say(failing, warn, `lockctl: ${context}: ${err.message}; retrying`)
        await sleep(RETRY_PAUSE_MS, undefined, { signal: stop.signal }).catch(() => undefined)
        continue
      }
      if (reply.status === 503 || reply.status === 429) {
        const err = errorOf(reply)
        failing = say(failing, warn, `lockctl: ${context}: ${err.message} (${err.error}); retrying`)
        await sleep(RETRY_PAUSE_MS, undefined, { signal: stop.signal }).catch(() => undefined)
        continue
      }
      if (reply.status !== 200) throw failure(context, reply)
      if (failing) warn(`lockctl: ${context}: observing again`)
      failing = false
      const next: State = {
        term: numberOf(context, reply.body.term),
        revision: Number(reply.body.revision ?? 0),
        leader: leaderOf(context, reply.body),
      }
      // Behind a load balancer, a replica that has not caught up may answer with an older term: it is
      // not printed (terms never go back), and asked again shortly.
      if (shown && next.term < shown.term) {
        await sleep(LAGGING_PAUSE_MS, undefined, { signal: stop.signal }).catch(() => undefined)
        continue
      }
      const line = change(shown, next, reply.body.reason)
      if (line) print(o.json ? JSON.stringify(line) : text(line))
      shown = next
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  return EXIT.ok
}

/** Warns once per outage: whether lockctl is now failing. */
function say(failing: boolean, warn: (line: string) => void, line: string): boolean {
  if (!failing) warn(line)
  return true
}

type Line =
  | { event: 'elected'; term: number; candidate: string; value: string | null; since?: string }
  | { event: 'proclaimed'; term: number; value: string | null }
  | { event: 'vacant'; term: number; reason?: string }

/** The event that takes an observer from `before` to `after` (none when nothing it shows changed). */
function change(before: State | undefined, after: State, reason: unknown): Line | undefined {
  const l = after.leader
  if (l === null) {
    if (before && before.leader === null && before.term === after.term) return undefined
    return { event: 'vacant', term: after.term, ...(typeof reason === 'string' ? { reason } : {}) }
  }
  if (!before || before.leader === null || before.term !== l.term)
    return { event: 'elected', term: l.term, candidate: l.candidate, value: l.value, ...(l.since ? { since: l.since } : {}) }
  if (before.revision !== after.revision || before.leader.value !== l.value) return { event: 'proclaimed', term: l.term, value: l.value }
  return undefined
}

function text(line: Line): string {
  const value = 'value' in line && line.value !== null ? ` value=${line.value}` : ''
  if (line.event === 'elected') return `elected term=${line.term} candidate=${line.candidate}${value}`
  if (line.event === 'proclaimed') return `proclaimed term=${line.term}${value}`
  return `vacant term=${line.term}${line.reason ? ` reason=${line.reason}` : ''}`
}

function numberOf(context: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new CliError(EXIT.protocol, `${context}: the answer lacks its term`)
  return v
}

function leaderOf(context: string, body: Record<string, unknown>): Leader | null {
  const l = body.leader
  if (l === null || l === undefined) return null
  const { candidate, value, term } = l as Record<string, unknown>
  if (typeof candidate !== 'string' || typeof term !== 'number' || (value !== null && value !== undefined && typeof value !== 'string'))
    throw new CliError(EXIT.protocol, `${context}: the leader lacks its candidate or term`)
  return { ...(l as Leader), value: typeof value === 'string' ? value : null }
}
