/** The service's rules for arguments, checked before any request so a mistake names its argument. */
import { InvalidArgumentError } from './errors.js'

const KEY = /^[A-Za-z0-9._:@=+-]{1,200}$/
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/
const SESSION = /^s\.[A-Za-z0-9_-]{22}$/
const PRINTABLE = /^[^\p{C}]{1,200}$/u

export function checkKey(key: unknown, argument = 'key'): string {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new InvalidArgumentError(argument, 'must be 1–200 characters from A-Z a-z 0-9 . _ - : @ = +')
  }
  return key
}

export function checkToken(token: unknown, argument = 'token'): string {
  if (typeof token !== 'string' || !TOKEN.test(token)) {
    throw new InvalidArgumentError(argument, 'must be 16–128 characters from A-Z a-z 0-9 _ -')
  }
  return token
}

export function checkSession(id: unknown, argument = 'session'): string {
  if (typeof id !== 'string' || !SESSION.test(id)) throw new InvalidArgumentError(argument, 'must be a session id ("s." and 22 characters)')
  return id
}

export function checkOwner(owner: unknown, argument = 'owner'): string {
  if (typeof owner !== 'string' || !PRINTABLE.test(owner)) throw new InvalidArgumentError(argument, 'must be 1–200 printable characters')
  return owner
}

/** A whole number of ms, at least `min`. */
export function checkMs(value: unknown, argument: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(argument, `must be a whole number of ms, at least ${min}`)
  }
  return value
}

/** A whole number, at least `min` and at most `max`. */
export function checkCount(value: unknown, argument: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      argument,
      max === Number.MAX_SAFE_INTEGER ? `must be a whole number ≥ ${min}` : `must be a whole number in ${min}…${max}`,
    )
  }
  return value
}

/** A fence (or an election's term): a whole number in 1 … 2^53 − 1. */
export function checkFence(fence: unknown, argument = 'fence'): number {
  return checkCount(fence, argument, 1)
}
