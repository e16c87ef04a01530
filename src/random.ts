import { randomFillSync } from 'node:crypto'

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
