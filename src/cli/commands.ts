import type { Client, Grant, HoldRoutes, LockServiceError, PermitGrant } from '@lock-service/client'
import type { Options } from './args.js'
import { parseDuration } from '../contract/duration.js'
import { call } from './answers.js'
import { CliError, EXIT } from './exit.js'

/** Bound on every request that does not wait in line (a waiting acquire gets its wait on top). */
export const REQUEST_TIMEOUT_MS = 15_000

export type Print = (line: string) => void

/** A grant of any kind of hold. */
export type AnyGrant = Grant | PermitGrant

/** The routes of the hold --read / --write / --limit pick: /locks, /rwlocks/KEY/read, /rwlocks/KEY/write or /semaphores. */
export function routesOf(client: Client, mode: Options['mode']): HoldRoutes<Grant | PermitGrant> {
  if (mode === 'leader') throw new CliError(EXIT.usage, 'lockctl does not campaign in elections')
  return client.routesOf(mode)
}

/** --ttl in ms, when given. */
export function ttlMsOf(o: Options): number | undefined {
  return o.ttl === undefined ? undefined : parseDuration(o.ttl)
}

/** `KEY`, or `KEY (read)` / `KEY (write)` / `KEY (semaphore)`: the hold, as messages name it. */
export function describeHold(o: Options): string {
  if (o.mode === 'exclusive') return o.lockKey
  return `${o.lockKey} (${o.mode === 'permit' ? 'semaphore' : o.mode})`
}

/**
 * Acquires the hold, waiting in line up to --wait: the grant, or the error that ends lockctl. Bound to
 * `session`, the hold's lease is the session's (no ttl of its own). No retries beyond the wait: a
 * failure is lockctl's answer (exit 69 for an unreachable service), for the caller to decide.
 */
export async function requestGrant(client: Client, context: string, o: Options, signal?: AbortSignal, session?: string): Promise<AnyGrant> {
  const ttlMs = session ? undefined : ttlMsOf(o)
  return call(
    context,
    () =>
      routesOf(client, o.mode).acquire(o.lockKey, {
        token: o.token,
        ttlMs,
        waitMs: o.waitMs,
        owner: o.owner,
        session,
        lockDelayMs: o.lockDelay === undefined ? undefined : parseDuration(o.lockDelay),
        retryBudgetMs: 0,
        signal,
        ...(o.permits ? { limit: o.permits.limit, permits: o.permits.permits } : {}),
      }),
    signal,
  )
}

export async function acquire(client: Client, o: Options, print: Print): Promise<number> {
  print(JSON.stringify(await requestGrant(client, `acquire ${describeHold(o)}`, o)))
  return EXIT.ok
}

export async function renew(client: Client, o: Options, print: Print): Promise<number> {
  const ttlMs = ttlMsOf(o)
  const renewed = await call(`renew ${describeHold(o)}`, () => routesOf(client, o.mode).renew(o.lockKey, o.token ?? '', { ttlMs }))
  print(JSON.stringify(renewed))
  return EXIT.ok
}

export async function release(client: Client, o: Options, print: Print): Promise<number> {
  print(JSON.stringify(await call(`release ${describeHold(o)}`, () => routesOf(client, o.mode).release(o.lockKey, o.token ?? ''))))
  return EXIT.ok
}

export async function status(client: Client, o: Options, print: Print): Promise<number> {
  const context = `status ${o.lockKey}${o.rw ? ' (rw)' : o.semaphore ? ' (semaphore)' : ''}`
  const inspect: () => Promise<unknown> = o.rw
    ? () => client.rwlocks.inspect(o.lockKey)
    : o.semaphore
      ? () => client.semaphores.inspect(o.lockKey)
      : () => client.locks.inspect(o.lockKey)
  const info = await call(context, () =>
    inspect().catch((err: LockServiceError) => {
      if (err.code === 'lock_not_found') throw new CliError(EXIT.failed, `${context}: not held`)
      throw err
    }),
  )
  print(JSON.stringify(info))
  return EXIT.ok
}

/** Items per page asked of the service (the service may answer a few more or fewer). */
export const LIST_PAGE = 100
const MAX_PAGES = 100_000

export async function list(client: Client, o: Options, print: Print): Promise<number> {
  const namespace = o.rw ? 'rwlocks' : o.semaphore ? 'semaphores' : 'locks'
  const line = { locks: lockLine, rwlocks: rwLine, semaphores: semaphoreLine }[namespace]
  const context = `list ${namespace}${o.prefix ? ` ${o.prefix}*` : ''}`
  const printed = new Set<string>() // SCAN may show a key on two pages
  const cursors = new Set<string>()
  let cursor: string | null = null
  for (let page = 0; page < MAX_PAGES; page++) {
    const want = o.limit === undefined ? LIST_PAGE : Math.min(LIST_PAGE, o.limit - printed.size)
    const request = { prefix: o.prefix, limit: want, cursor: cursor ?? undefined }
    const page = (): Promise<{ items?: unknown; cursor?: unknown }> =>
      namespace === 'rwlocks'
        ? client.rwlocks.list(request)
        : namespace === 'semaphores'
          ? client.semaphores.list(request)
          : client.locks.list(request)
    const answer = await call(context, page)
    const { items, cursor: next } = answer
    if (!Array.isArray(items) || (next !== null && typeof next !== 'string')) {
      throw new CliError(EXIT.protocol, `${context}: the page lacks items or cursor`)
    }
    for (const item of items as unknown[]) {
      if (o.limit !== undefined && printed.size >= o.limit) return EXIT.ok
      if (item === null || typeof item !== 'object' || typeof (item as { key?: unknown }).key !== 'string') {
        throw new CliError(EXIT.protocol, `${context}: an item without a key`)
      }
      const lock = item as Record<string, unknown> & { key: string }
      if (printed.has(lock.key)) continue
      printed.add(lock.key)
      print(o.json ? JSON.stringify(lock) : line(lock))
    }
    if (next === null || next === '' || (o.limit !== undefined && printed.size >= o.limit)) return EXIT.ok
    if (cursors.has(next)) throw new CliError(EXIT.protocol, `${context}: the service returned cursor ${JSON.stringify(next)} twice`)
    cursors.add(next)
    cursor = next
  }
  throw new CliError(EXIT.protocol, `${context}: more than ${MAX_PAGES} pages`)
}

function field(v: unknown): string {
  return v === undefined || v === null ? '-' : String(v)
}

function lockLine(l: Record<string, unknown> & { key: string }): string {
  const owner = typeof l.owner === 'string' ? ` owner=${l.owner}` : ''
  const counts = `holdCount=${field(l.holdCount)} waiters=${field(l.waiters)}`
  return `${l.key} ${field(l.mode ?? 'exclusive')} fence=${field(l.fence)} remainingMs=${field(l.remainingMs)} ${counts}${owner}`
}

/** ` owners=["a","b"]` when the holds have owner labels, else nothing. */
function ownersField(l: Record<string, unknown>): string {
  return Array.isArray(l.owners) && l.owners.length > 0 ? ` owners=${JSON.stringify(l.owners)}` : ''
}

function rwLine(l: Record<string, unknown> & { key: string }): string {
  const writer = (l.writer ?? null) as { fence?: unknown; remainingMs?: unknown } | null
  // Each read hold as FENCE:REMAININGMS (what `DELETE /rwlocks/KEY/read?force=true&fence=FENCE` takes).
  const holds = Array.isArray(l.readerHolds) ? (l.readerHolds as { fence?: unknown; remainingMs?: unknown }[]) : []
  return (
    `${l.key} ${writer ? 'write' : 'read'} writerFence=${field(writer?.fence)} writerRemainingMs=${field(writer?.remainingMs)} ` +
    `readers=${field(l.readers)} writerWaiting=${field(l.writerWaiting)} waiters=${field(l.waiters)} ` +
    `readerHolds=${holds.map((h) => `${field(h.fence)}:${field(h.remainingMs)}`).join(',') || '-'}${ownersField(l)}`
  )
}

function semaphoreLine(l: Record<string, unknown> & { key: string }): string {
  // Each hold as FENCE:PERMITS:REMAININGMS (what `DELETE /semaphores/KEY?force=true&fence=FENCE` takes).
  const holds = Array.isArray(l.holds) ? (l.holds as { fence?: unknown; permits?: unknown; remainingMs?: unknown }[]) : []
  return (
    `${l.key} semaphore limit=${field(l.limit)} permitsInUse=${field(l.permitsInUse)} ` +
    `holders=${field(l.holders)} waiters=${field(l.waiters)} ` +
    `holds=${holds.map((h) => `${field(h.fence)}:${field(h.permits)}:${field(h.remainingMs)}`).join(',') || '-'}${ownersField(l)}`
  )
}
