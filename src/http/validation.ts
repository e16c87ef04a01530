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
 * - a lock key in the path and a Lock-Token header, tested against the very patterns their schemas use;
 * - a small flat query or body that passed before (`remembered`).
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
  const known = route.httpPart === 'body' || route.httpPart === 'querystring' ? remembered(checked) : checked
  // An absent body comes as null, an absent query as an empty object.
  const empty = route.httpPart === 'body' ? null : {}
  if (!keepsAsIs(schema, empty)) return known
  return empty === null
    ? (data) => (data === null || data === undefined ? KEEP : known(data))
    : (data) => (isEmpty(data) ? KEEP : known(data))
}

/** Values remembered per field of a validator: at most this many, each at most MEMO_VALUE_CHARS long if a string. */
const MEMO_SIZE = 64
const MEMO_VALUE_CHARS = 200

type Flat = string | number | boolean
/** Fields never remembered: secrets are not kept longer than their request, and each is new anyway. */
const SECRETS: ReadonlySet<string> = new Set(['token', 'session'])

/**
 * `validate`, remembering what it made of the inputs of one field it passed (`?ttl=30s`,
 * `{"ttlMs":30000}`): clients send the same few again and again. The schemas are pure functions of
 * their input, so the same field with the same value (and type) passes the same way: the input
 * itself when zod gave back that field and value alone, else a copy of zod's output. Failures are not
 * remembered (zod writes each error); inputs of several fields go to zod every time.
 */
function remembered(validate: Validate): Validate {
  let fields: Map<string, Map<Flat, Result>> | undefined
  return (data) => {
    const name = onlyField(data)
    if (name === undefined || SECRETS.has(name)) return validate(data)
    const value = (data as Record<string, unknown>)[name]
    if (!isFlat(value)) return validate(data)
    let values = fields?.get(name)
    const known = values?.get(value)
    if (known !== undefined) return known === KEEP ? KEEP : { value: { ...(known.value as object) } }
    const result = validate(data)
    if (result.error) return result
    fields ??= new Map()
    if (values === undefined) {
      if (fields.size >= MEMO_SIZE) fields.clear()
      fields.set(name, (values = new Map()))
    }
    if (values.size >= MEMO_SIZE) values.clear()
    values.set(value, sameField(name, value, result.value) ? KEEP : { value: { ...(result.value as object) } })
    return result
  }
}

/** The name of a plain object's one field; undefined for anything else (an array included). */
function onlyField(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  let only: string | undefined
  for (const name in data) {
    if (only !== undefined) return undefined
    only = name
  }
  return only
}

function isFlat(value: unknown): value is Flat {
  return (typeof value === 'string' && value.length <= MEMO_VALUE_CHARS) || typeof value === 'number' || typeof value === 'boolean'
}

/** Whether zod's output is that one field with that very value (nothing transformed). */
function sameField(name: string, value: Flat, output: unknown): boolean {
  if (typeof output !== 'object' || output === null) return false
  return Object.is((output as Record<string, unknown>)[name], value) && onlyField(output) === name
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
