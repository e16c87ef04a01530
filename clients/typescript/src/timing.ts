/** Delays: jitter, backoff, and a sleep a signal can cut short. */
import { setTimeout as wait } from 'node:timers/promises'

/** `base` ± `fraction` of it, uniformly. */
export function jitter(base: number, fraction: number, random: () => number = Math.random): number {
  return base * (1 - fraction + 2 * fraction * random())
}

/**
 * The delay before retry number `attempt` (0-based): never earlier than the service's Retry-After
 * (plus up to 20 % so that many clients told the same do not come back at once), else an exponential
 * backoff from 50 ms, capped at 1 s, with full jitter.
 */
export function retryDelay(attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return retryAfterMs * (1 + 0.2 * random())
  return Math.min(1000, 50 * 2 ** attempt) * (0.5 + 0.5 * random())
}

/** Sleeps `ms`; rejects with the signal's reason when it aborts first. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  await wait(Math.max(0, ms), undefined, signal ? { signal } : undefined).catch((err: unknown) => {
    throw signal?.aborted ? signal.reason : err
  })
}
