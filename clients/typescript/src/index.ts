/**
 * @lock-service/client: a typed client for lock-service (Node ≥ 20.19, no dependencies).
 *
 * - {@link Client}: every route (`client.locks`, `client.rwlocks.read` / `.write`, `client.semaphores`,
 *   `client.sessions`, `health`, `readiness`), typed answers, typed errors.
 * - `client.withLock(key, options, async ({ fence, signal }) => …)`: a hold kept alive by a watchdog
 *   whose loss aborts `signal`; `client.lock()` for the same as a handle you release yourself.
 */
export { Client, Locks, RwLocks, Semaphores, type LockOptions, type LeadershipOptions } from './client.js'
export { Hold, DEFAULT_RELEASE_TIMEOUT_MS } from './hold.js'
export {
  HoldRoutes,
  newToken,
  DEFAULT_RETRY_BUDGET_MS,
  type AcquireOptions,
  type PermitOptions,
  type ListOptions,
  type WatchOptions,
} from './operations.js'
export { Sessions, Session, type SessionOptions } from './sessions.js'
export { Elections, Leadership, type CampaignOptions, type ObserveOptions, type ElectionEvent } from './elections.js'
export { DEFAULT_TIMEOUT_MS, type ClientOptions } from './transport.js'
export { jitter, retryDelay } from './timing.js'
export * from './errors.js'
export type * from './wire.js'
