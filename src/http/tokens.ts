import { randomBytes } from 'node:crypto'
import { fail } from '../errors.js'

/**
 * A server-made owner token: 128 random bits, base64url (22 characters). Never one that starts with
 * '-' or '_' (awkward as a command-line argument: `lockctl release k --token -…`); skipping those
 * costs 0.05 bits.
 */
export function newToken(): string {
  for (;;) {
    const token = randomBytes(16).toString('base64url')
    if (/^[A-Za-z0-9]/.test(token)) return token
  }
}

/**
 * The one value a field may take when a request gives it several ways (header, body, query):
 * all the given values must agree.
 */
export function oneOf<T>(field: string, ...values: (T | undefined)[]): T | undefined {
  const given = values.filter((v): v is T => v !== undefined)
  const first = given[0]
  if (given.some((v) => v !== first)) {
    throw fail.invalid(`${field} is given more than once with different values`, [{ path: field, message: 'conflicting values' }])
  }
  return first
}

export function requireToken(token: string | undefined): string {
  if (token === undefined) {
    throw fail.invalid('a token is required: send the Lock-Token header or a token field', [{ path: 'token', message: 'required' }])
  }
  return token
}
