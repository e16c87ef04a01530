/**
 * The values the service sends, typed from openapi.yaml (src/generated/openapi.ts). Times the service
 * sends as ISO 8601 strings (`expiresAt`, a watch's `at`) are `Date`s here; everything else is as sent.
 */
import type { components, operations } from './generated/openapi.js'

type Json<Op extends keyof operations, Status extends number> =
  operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer Body } }> ? Body : never

type WithTime<T, Field extends string> = T extends unknown ? Omit<T, Field> & { [K in Field & keyof T]: Date } : never

/** The error body: `{ error, message, ...details }`. */
export type ErrorBody = components['schemas']['Error']
/** One Redis node's state in a 503 `backend_unavailable` or in `/readyz`. */
export type NodeState = NonNullable<ErrorBody['nodes']>[number]

/** Which hold: a lock (`exclusive`), a read or write hold of a read-write lock, or semaphore permits (`permit`). */
export type HoldKind = 'exclusive' | 'read' | 'write' | 'permit'

/** A grant (acquire, and the answer of a renew) of a lock or a read/write hold. */
export type Grant = WithTime<Json<'acquireLock', 201> | Json<'acquireReadHold', 201> | Json<'acquireWriteHold', 201>, 'expiresAt'>
/** A semaphore's grant: also `permits` and the semaphore's `limit`. */
export type PermitGrant = WithTime<Json<'acquirePermit', 201>, 'expiresAt'>
/** What a release answers: `released` is false while a reentrant hold still has holds. */
export type Released = Json<'releaseLock', 200>
/** A force-release's answer. */
export type ForceReleased = Json<'releaseLock', 200>

export type LockInfo = Json<'inspectLock', 200>
/** A fence check's answer: `current` only while a live hold carries exactly that fence (a snapshot). */
export type FenceCheck = Json<'checkLockFence', 200>
export type RwLockInfo = Json<'inspectRwLock', 200>
export type SemaphoreInfo = Json<'inspectSemaphore', 200>
export type LockPage = Json<'listLocks', 200>
export type RwLockPage = Json<'listRwLocks', 200>
export type SemaphorePage = Json<'listSemaphores', 200>

export type SessionOpened = WithTime<Json<'openSession', 201>, 'expiresAt'>
export type SessionKeptAlive = WithTime<Json<'keepaliveSession', 200>, 'expiresAt'>
export type SessionInfo = Json<'inspectSession', 200>
export type SessionClosed = Json<'closeSession', 200>

export type LeaderGrant = WithTime<Json<'campaign', 201>, 'expiresAt' | 'since'>
export type LeaderRenewed = WithTime<Json<'renewLeadership', 200>, 'expiresAt'>
export type Proclaimed = Json<'proclaim', 200>
export type Resigned = Json<'resign', 200>
export type ElectionInfo = Json<'inspectElection', 200>
export type ElectionPage = Json<'listElections', 200>
export type Observed = Json<'observeElection', 200>

export type Health = Json<'getHealth', 200>
export type Readiness = Json<'getReadiness', 200>

/** Why the service says a hold is gone. */
export type ServiceLossReason = 'expired' | 'released' | 'force_released' | 'session_lost'

/**
 * Why a hold was lost: the service's reason (from a watch), or the library's: `not_held` (a renew
 * answered 404 or 409), `validity_exhausted` (renewals kept failing until the local deadline minus
 * the safety margin), `max_hold` (the opt-in cap was reached).
 */
export type LossReason = ServiceLossReason | 'not_held' | 'validity_exhausted' | 'max_hold'

/** One answer of a watch: still held when the wait ran out, or gone (why, and when). */
export type WatchEvent = { held: true; remainingMs: number } | { held: false; reason: ServiceLossReason; at: Date }

const withDate = <T extends Record<string, unknown>, F extends string>(body: T, field: F): T =>
  typeof body[field] === 'string' ? { ...body, [field]: new Date(body[field]) } : body

/** Turns a wire body's time field into a Date (keeps the field's place in the object). */
export function timed<T>(body: unknown, field: string): T {
  return withDate(body as Record<string, unknown>, field) as T
}
