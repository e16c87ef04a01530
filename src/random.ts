import { randomBytes, randomFillSync } from 'node:crypto'

/** 16-byte values a pool holds: refilled from the CSPRNG when used up. */
const POOLED = 256
const pool = Buffer.alloc(16 * POOLED)
let next = POOLED

/**
 * 128 random bits from the operating system's CSPRNG, base64url (22 characters). Taken from a pool
 * filled 4 KiB at a time, as Node's own randomUUID does: one randomBytes(16) call costs about 2 µs,
 * which every acquire without a token of its own paid. Each value's bytes are used once.
 */
export function random128(): string {
  if (next === POOLED) {
    randomFillSync(pool)
    next = 0
  }
  const at = 16 * next++
  return pool.toString('base64url', at, at + 16)
}

/**
 * Ids for things that need only be told apart, not guessed (an attempt, a request in the logs): a
 * random prefix of `bytes` bytes made once per process, then a counter, so that two processes' ids
 * differ too. A counter costs far less than fresh random bytes for every id.
 */
export function sequentialIds(bytes: number, separator = ''): () => string {
  const prefix = randomBytes(bytes).toString('base64url') + separator
  let n = 0
  return () => {
    n = n === Number.MAX_SAFE_INTEGER ? 1 : n + 1
    return prefix + n.toString(36)
  }
}
