import type { FastifySchemaCompiler } from 'fastify'
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { keyParams } from './schemas/common.js'

/**
 * The routes' validator: zod's (fastify-type-provider-zod), except that request headers are checked
 * and then left as they came. Fastify stores a validated headers object beside the raw headers and,
 * from then on, merges the two into a new object on every read of `request.headers`; the header
 * schemas transform nothing (a token is the string sent), so keeping the raw headers reads the same
 * values without a copy of every header for each read.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = zodValidatorCompiler(route)
  // The same for a lock key in the path (a string checked against a pattern, never transformed): a
  // parked request keeps the params it came with instead of them and a copy.
  if (route.httpPart !== 'headers' && !(route.httpPart === 'params' && route.schema === keyParams)) return validate
  return (data) => {
    const result = validate(data) as { error?: Error }
    return result.error ? result : {}
  }
}
