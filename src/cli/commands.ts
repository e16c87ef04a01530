import type { Options } from './args.js'
import { failure, isGrant, type LockServiceClient, unreachable, UnreachableError, type Grant, type Reply } from './client.js'
import { CliError, EXIT } from './exit.js'

/** Bound on every request that does not wait in line. */
export const REQUEST_TIMEOUT_MS = 15_000

export type Print = (line: string) => void

/** `/locks/KEY`, `/rwlocks/KEY/read`, `/rwlocks/KEY/write` or `/semaphores/KEY`. */
export function holdPath(mode: Options['mode'], key: string): string {
  const k = encodeURIComponent(key)
  if (mode === 'exclusive') return `/locks/${k}`
  if (mode === 'permit') return `/semaphores/${k}`
  return `/rwlocks/${k}/${mode}`
}

/** Where status and list look: /locks, /rwlocks (--rw) or /semaphores (--semaphore). */
function namespaceOf(o: Options): 'locks' | 'rwlocks' | 'semaphores' {
  return o.rw ? 'rwlocks' : o.semaphore ? 'semaphores' : 'locks'
}

/** Runs one request, turning "unreachable" into exit 69 with `context` in the message. */
export async function call(client: LockServiceClient, context: string, ...args: Parameters<LockServiceClient['request']>): Promise<Reply> {
  try {
    return await client.request(...args)
  } catch (err) {
    if (err instanceof UnreachableError) throw unreachable(context, err)
    throw err
  }
}

/** `KEY`, or `KEY (read)` / `KEY (write)` / `KEY (semaphore)`: the hold, as messages name it. */
export function describeHold(o: Options): string {
  if (o.mode === 'exclusive') return o.lockKey
  return `${o.lockKey} (${o.mode === 'permit' ? 'semaphore' : o.mode})`
}

/**
 * POSTs the hold, waiting in line up to --wait: the grant, or the error that ends lockctl. Bound to
 * `session`, the hold's lease is the session's (no ttl of its own).
 */
export async function requestGrant(
  client: LockServiceClient,
  context: string,
  o: Options,
  signal?: AbortSignal,
  session?: string,
): Promise<Grant> {
  const reply = await call(client, context, 'POST', holdPath(o.mode, o.lockKey), {
    token: o.token,
    query: {
      ttl: session ? undefined : o.ttl,
      wait: o.wait,
      limit: o.permits?.limit,
      permits: o.permits?.permits,
      owner: o.owner,
      session,
      lockDelay: o.lockDelay,
    },
    timeoutMs: o.waitMs + REQUEST_TIMEOUT_MS,
    signal,
  })
  if (reply.status !== 200 && reply.status !== 201) throw failure(context, reply)
  if (!isGrant(reply.body)) throw new CliError(EXIT.protocol, `${context}: the grant lacks its token or fence`)
  return reply.body
}

export async function acquire(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  print(JSON.stringify(await requestGrant(client, `acquire ${describeHold(o)}`, o)))
  return EXIT.ok
}

export async function renew(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const context = `renew ${describeHold(o)}`
  const reply = await call(client, context, 'PUT', `${holdPath(o.mode, o.lockKey)}/renew`, {
    token: o.token,
    query: { ttl: o.ttl },
    timeoutMs: REQUEST_TIMEOUT_MS,
  })
  if (reply.status !== 200) throw failure(context, reply)
  print(JSON.stringify(reply.body))
  return EXIT.ok
}

export async function release(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const context = `release ${describeHold(o)}`
  const reply = await call(client, context, 'DELETE', holdPath(o.mode, o.lockKey), { token: o.token, timeoutMs: REQUEST_TIMEOUT_MS })
  if (reply.status !== 200) throw failure(context, reply)
  print(JSON.stringify(reply.body))
  return EXIT.ok
}

export async function status(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const namespace = namespaceOf(o)
  const path = `/${namespace}/${encodeURIComponent(o.lockKey)}`
  const context = `status ${o.lockKey}${o.rw ? ' (rw)' : o.semaphore ? ' (semaphore)' : ''}`
  const reply = await call(client, context, 'GET', path, { timeoutMs: REQUEST_TIMEOUT_MS })
  if (reply.status === 404 && reply.body.error === 'lock_not_found') throw new CliError(EXIT.failed, `${context}: not held`)
  if (reply.status !== 200) throw failure(context, reply)
  print(JSON.stringify(reply.body))
  return EXIT.ok
}

/** Items per page asked of the service (the service may answer a few more or fewer). */
export const LIST_PAGE = 100
const MAX_PAGES = 100_000

export async function list(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const namespace = namespaceOf(o)
  const line = { locks: lockLine, rwlocks: rwLine, semaphores: semaphoreLine }[namespace]
  const context = `list ${namespace}${o.prefix ? ` ${o.prefix}*` : ''}`
  const printed = new Set<string>() // SCAN may show a key on two pages
  const cursors = new Set<string>()
  let cursor: string | null = null
  for (let page = 0; page < MAX_PAGES; page++) {
    const want = o.limit === undefined ? LIST_PAGE : Math.min(LIST_PAGE, o.limit - printed.size)
    const reply = await call(client, context, 'GET', `/${namespace}`, {
      query: { prefix: o.prefix, limit: want, cursor: cursor ?? undefined },
      timeoutMs: REQUEST_TIMEOUT_MS,
    })
    if (reply.status !== 200) throw failure(context, reply)
    const { items, cursor: next } = reply.body
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
