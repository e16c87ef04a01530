/** `lockctl leader NAME` (who leads now) and `lockctl observe NAME` (each change, one line each). */
import { setTimeout as sleep } from 'node:timers/promises'
import { LockNotFoundError, LockServiceError, TooManyError, BackendUnavailableError, type Client } from '@lock-service/client'
import type { Options } from './args.js'
import { call, describeAnswer, failure } from './answers.js'
import type { Print } from './commands.js'
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

export async function leader(client: Client, o: Options, print: Print): Promise<number> {
  const context = `leader ${o.lockKey}`
  const info = await call(context, () =>
    client.elections.inspect(o.lockKey).catch((err: unknown) => {
      throw err instanceof LockNotFoundError ? new CliError(EXIT.failed, `${context}: no leader`) : err
    }),
  )
  const current = leaderOf(context, info)
  if (current === null) throw new CliError(EXIT.failed, `${context}: no leader (after term ${info.term})`)
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
export async function observe(client: Client, o: Options, print: Print, warn: (line: string) => void): Promise<number> {
  const context = `observe ${o.lockKey}`
  const stop = new AbortController()
  const onSignal = (): void => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  let shown: State | undefined
  let failing = false
  try {
    while (!stop.signal.aborted) {
      let answer: Record<string, unknown>
      try {
        const seen = shown ? { after: shown.term, revision: shown.revision, waitMs: OBSERVE_WAIT_MS } : {}
        answer = await client.elections.observe(o.lockKey, { ...seen, signal: stop.signal })
      } catch (err) {
        if (stop.signal.aborted) break
        // A lost connection (status 0), an unavailable service, too many observers: asked again.
        const transient =
          err instanceof LockServiceError && (err.status === 0 || err instanceof BackendUnavailableError || err instanceof TooManyError)
        if (!transient) throw failure(context, err)
        const why = err.status === 0 ? err.message : describeAnswer(err)
        failing = say(failing, warn, `lockctl: ${context}: ${why}; retrying`)
        await sleep(RETRY_PAUSE_MS, undefined, { signal: stop.signal }).catch(() => undefined)
        continue
      }
      if (failing) warn(`lockctl: ${context}: observing again`)
      failing = false
      const next: State = {
        term: numberOf(context, answer.term),
        revision: Number(answer.revision ?? 0),
        leader: leaderOf(context, answer),
      }
      // Behind a load balancer, a replica that has not caught up may answer with an older term: it is
      // not printed (terms never go back), and asked again shortly.
      if (shown && next.term < shown.term) {
        await sleep(LAGGING_PAUSE_MS, undefined, { signal: stop.signal }).catch(() => undefined)
        continue
      }
      const line = change(shown, next, answer.reason)
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

function leaderOf(context: string, body: object): Leader | null {
  const l = (body as { leader?: unknown }).leader
  if (l === null || l === undefined) return null
  const { candidate, value, term } = l as Record<string, unknown>
  if (typeof candidate !== 'string' || typeof term !== 'number' || (value !== null && value !== undefined && typeof value !== 'string'))
    throw new CliError(EXIT.protocol, `${context}: the leader lacks its candidate or term`)
  return { ...(l as Leader), value: typeof value === 'string' ? value : null }
}
