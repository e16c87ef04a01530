import { randomBytes } from 'node:crypto'
import { ServiceError } from '../errors.js'

/** A server-made owner token: 128 random bits, base64url (22 characters). */
export function newToken(): string {
  return randomBytes(16).toString('base64url')
}

/**
 * The one value a field may take when a request gives it several ways (header, body, query):
 * all the given values must agree.
 */
export function oneOf<T>(field: string, ...values: (T | undefined)[]): T | undefined {
  const given = values.filter((v): v is T => v !== undefined)
  const first = given[0]
  if (given.some((v) => v !== first)) {
    throw new ServiceError('invalid_request', `${field} is given more than once with different values`, { issues: [{ path: field, message: 'conflicting values' }] })
  }
  return first
}

export function requireToken(token: string | undefined): string {
  if (token === undefined) {
    throw new ServiceError('invalid_request', 'a token is required: send the Lock-Token header or a token field', {
      issues: [{ path: 'token', message: 'required' }],
    })
  }
  return token
}
