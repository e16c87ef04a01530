import { createHash } from 'node:crypto'
import { random128 } from '../random.js'

/**
 * Session ids: "s." and 128 random bits (base64url; src/contract sessionIdRule). The '.' keeps them
 * apart from lock tokens (which cannot contain one), so using one for the other is a clear 400.
 */
export function newSessionId(): string {
  return `s.${random128()}`
}

/** What Redis knows a session by: a hash of its id (the id, a secret, is never stored or logged). */
export function sessionRef(id: string): string {
  return createHash('sha256').update(id).digest('base64url').slice(0, 22)
}
