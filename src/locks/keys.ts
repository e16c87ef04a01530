/**
 * Redis key names. Every key of one lock shares the hash tag `{<lock key>}`, so a script's keys always
 * live in one cluster slot. Lock keys cannot contain braces (the HTTP layer refuses them), and the
 * namespace sits outside the tag, so /locks/x and /rwlocks/x never touch the same Redis key.
 */
export interface ExclusiveKeys {
  lock: string
  fence: string
  waiters: string
}

export function exclusiveKeys(prefix: string, key: string): ExclusiveKeys {
  const base = `${prefix}lock:{${key}}`
  return { lock: base, fence: `${base}:fence`, waiters: `${base}:waiters` }
}

/** How long a fence counter outlives the last grant that used it; after that, Redis TIME is the floor. */
export const FENCE_MEMORY_MS = 7 * 24 * 3600 * 1000
