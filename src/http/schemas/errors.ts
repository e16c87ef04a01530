import { z } from 'zod'
import { errorCodes, errorStatus } from '../../contract/error-codes.js'
import { nodeStatusSchema } from './ops.js'

/** The one error body every route answers with, and the statuses each route documents. */

export const errorSchema = z
  .object({
    error: z.enum(errorCodes),
    message: z.string(),
    key: z.string().optional(),
    retryAfterMs: z.number().int().optional(),
    waitedMs: z.number().int().optional().describe('How long the request waited in line before giving up'),
    delayedUntil: z
      .string()
      .optional()
      .describe('409 lock_delayed, and 404 on inspect: ISO 8601 time at which the running lock-delay ends (retryAfterMs adds jitter)'),
    owners: z
      .array(z.string())
      .optional()
      .describe('409 lock_held: the owner labels of the holds in the way (those that have one; at most 10; absent when none has one)'),
    leader: z
      .object({ candidate: z.string(), term: z.number().int(), since: z.string() })
      .nullable()
      .optional()
      .describe('409 lock_held on a campaign: the current leader (null: a term is starting)'),
    limit: z
      .number()
      .int()
      .optional()
      .describe(
        "409 limit_mismatch: the semaphore's limit; 429 rate_limited: requests per second allowed; 429 too_many_streams: streams allowed",
      ),
    burst: z.number().int().optional().describe('429 rate_limited: the most requests at once after an idle spell'),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    allow: z.array(z.string()).optional().describe('405: the methods this path takes (also in the Allow header)'),
    reason: z.string().optional(),
    answered: z.number().int().optional().describe('Nodes that answered'),
    voting: z.number().int().optional().describe('Nodes that answered and may vote (the vote rule)'),
    needed: z.number().int().optional().describe('Votes a decision needs (a majority)'),
    nodes: z.array(nodeStatusSchema.extend({ answered: z.boolean() })).optional(),
  })
  .describe('Every error: { error: code, message: one human sentence, ...details }')

// One named schema in the OpenAPI document (components.schemas.Error), referenced by every route.
z.globalRegistry.add(errorSchema, { id: 'Error' })

/** Response map for routes: the status codes each can answer, documented with one error shape. */
export function errorResponses(statuses: readonly number[]) {
  return Object.fromEntries(statuses.map((s) => [s, errorSchema]))
}

/** The error codes a status stands for (the OpenAPI description of an error response). */
export function errorCodesOf(status: number): string {
  return errorCodes.filter((code) => errorStatus[code] === status).join(' | ')
}
