import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { lockKeyRule, tokenRule } from '../contract/patterns.js'
import { keyParams, tokenHeaders } from './schemas/common.js'

type Result = { error?: Error | FastifySchemaValidationError[]; value?: unknown }
type Validate = (data: unknown) => Result
/** Fastify's answer for a part that passed and is kept as it came (no `value`: nothing replaced). */
const KEEP: Result = Object.freeze({})

/**
 * The routes' validator: zod's (fastify-type-provider-zod), except that request headers are checked
 * and then left as they came. Fastify stores a validated headers object beside the raw headers and,
 * from then on, merges the two into a new object on every read of `request.headers`; the header
 * schemas transform nothing (a token is the string sent), so keeping the raw headers reads the same
 * values without a copy of every header for each read.
 *
 * Every request of the hot path (acquire and release) goes through four validators; zod costs ~2 µs
 * a request there (its code is shared by every schema, so it runs megamorphic). What the common
 * requests send is checked without it, and anything else goes to zod, which also writes every error:
 * - a part that is absent or empty (no query, no body), where the schema accepts it as it is;
 * - headers that carry none of the fields their schema reads (a strip-mode object: others are ignored);
 * - a lock key in the path and a Lock-Token header, tested against the very patterns their schemas use.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = zodValidatorCompiler(route) as Validate
  const schema = route.schema as z.ZodType
  // A lock key in the path is a string checked against a pattern, never transformed: a parked
  // request keeps the params it came with instead of them and a copy.
  const keyPath = route.httpPart === 'params' && schema === keyParams
  const checked: Validate =
    route.httpPart === 'headers' || keyPath
      ? (data) => {
          const result = validate(data)
          return result.error ? result : KEEP
        }
      : validate
  if (keyPath) return (data) => (isLockKeyParams(data) ? KEEP : checked(data))
  if (route.httpPart === 'headers') {
    const fields = stripModeFields(schema)
    if (fields === undefined) return checked
    const tokenOnly = schema === tokenHeaders
    return (data) => {
      const headers = data as Record<string, unknown>
      if (tokenOnly) {
        const token = headers['lock-token']
        return token === undefined || (typeof token === 'string' && tokenRule.pattern.test(token)) ? KEEP : checked(data)
      }
      for (const field of fields) if (headers[field] !== undefined) return checked(data)
      return KEEP
    }
  }
  // An absent body comes as null, an absent query as an empty object.
  const empty = route.httpPart === 'body' ? null : {}
  if (!keepsAsIs(schema, empty)) return checked
  return empty === null
    ? (data) => (data === null || data === undefined ? KEEP : checked(data))
    : (data) => (isEmpty(data) ? KEEP : checked(data))
}

/** `{ key }` and nothing else, the key matching the pattern lockKeySchema checks. */
function isLockKeyParams(data: unknown): boolean {
  const key = (data as { key?: unknown }).key
  if (typeof key !== 'string' || !lockKeyRule.pattern.test(key)) return false
  for (const name in data as object) if (name !== 'key') return false
  return true
}

/** An object with no enumerable properties (Fastify's query object has no prototype and no symbols). */
function isEmpty(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false
  for (const _ in data) return false
  return true
}

/**
 * Whether the schema accepts this empty input (null, or an empty object) and gives back nothing
 * more: no default filled in, no transform making a value. Then an empty part may be kept as it came.
 */
function keepsAsIs(schema: z.ZodType, empty: null | object): boolean {
  const result = schema.safeParse(empty)
  if (!result.success) return false
  const out: unknown = result.data
  return out === null || out === undefined || (typeof out === 'object' && Object.keys(out).length === 0)
}

/**
 * The fields of a headers schema that ignores headers it does not name and accepts none of its own
 * (every field optional, no default); undefined for any other schema (always checked by zod).
 */
function stripModeFields(schema: z.ZodType): readonly string[] | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined
  const fields = Object.keys(schema.shape)
  const probe = schema.safeParse({ 'x-not-a-field': 'x' })
  if (!probe.success || Object.keys(probe.data as object).length !== 0) return undefined
  return fields
}
