import { random128 } from '../random.js'
import { fail } from '../errors.js'

/**
 * A server-made owner token: 128 random bits, base64url (22 characters). Never one that starts with
 * '-' or '_' (awkward as a command-line argument: `lockctl release k --token -…`); skipping those
 * costs 0.05 bits.
 */
export function newToken(): string {
  for (;;) {
    const token = random128()
    if (/^[A-Za-z0-9]/.test(token)) return token
  }
}

/**
 * The one value a field may take when a request gives it several ways (header, body, query):
 * all the given values must agree. (Fixed parameters, not a rest array: it runs several times on
 * every request.)
 */
export function oneOf<T>(field: string, a: T | undefined, b: T | undefined, c?: T): T | undefined {
  const first = a !== undefined ? a : b !== undefined ? b : c
  if ((a !== undefined && a !== first) || (b !== undefined && b !== first) || (c !== undefined && c !== first)) {
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
