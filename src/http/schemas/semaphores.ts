import { z } from 'zod'
import { wholeNumber } from '../../contract/whole-number.js'
import type { PermitGrantBody } from '../../contract/wire.js'
import { modesOf } from '../../contract/words.js'
import { delayedUntilField, flag, holderOwner, optionalBody, ownersList, type Limits } from './common.js'
import { acquireFields, grantSchema } from './holds.js'

/** /semaphores: an acquire with a limit and permits, its grant, and what inspect and the listing show. */

const permitCount = (name: string, what: string, limits: Limits) =>
  z
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(1, `${name} must be at least 1`)
    .max(limits.maxSemaphoreLimit, `${name} must be at most ${limits.maxSemaphoreLimit} (MAX_SEMAPHORE_LIMIT)`)
    .describe(`${what}. 1 … MAX_SEMAPHORE_LIMIT (${limits.maxSemaphoreLimit})`)

const semaphoreLimitText =
  "The semaphore's limit: how many permits its holds may take in all. Required (as ?limit= or the body's limit); " +
  'fixed while anyone holds or waits (another value: 409 limit_mismatch)'
const permitsText =
  'Permits this hold takes (a weighted hold): default 1, at most the limit; a re-acquire by the holder asks for the same number'

/** A semaphore's acquire: a lock's fields, plus its limit and the permits asked for. */
export function semaphoreAcquireSchemas(limits: Limits) {
  const fields = acquireFields(limits)
  const max = limits.maxSemaphoreLimit
  return {
    querystring: z.strictObject({
      ...fields.query,
      limit: wholeNumber('limit', 1, max).optional().describe(`${semaphoreLimitText}. 1 … MAX_SEMAPHORE_LIMIT (${max})`),
      permits: wholeNumber('permits', 1, max).optional().describe(`${permitsText}. 1 … MAX_SEMAPHORE_LIMIT (${max})`),
    }),
    body: optionalBody(
      z
        .strictObject({
          ...fields.body,
          limit: permitCount('limit', semaphoreLimitText, limits).optional(),
          permits: permitCount('permits', permitsText, limits).optional(),
        })
        .describe('limit is required (here or as ?limit=); every other field optional'),
    ),
  }
}

export const permitGrantSchema = grantSchema
  .extend({
    mode: z.enum(modesOf.semaphores),
    permits: z.number().int().describe('The permits this hold takes'),
    limit: z.number().int().describe("The semaphore's limit (fixed while anyone holds or waits)"),
  })
  .describe("A semaphore's hold") satisfies z.ZodType<PermitGrantBody>

export const semaphoreInspectQuery = z.strictObject({
  holds: flag.optional().describe('Admin: also list each hold (fence, permits, remaining time, count), e.g. to force-release one by fence'),
})

const semaphoreHoldSchema = z.object({
  fence: z.number().int().describe('Its fence: what DELETE /semaphores/{key}?force=true&fence= takes'),
  permits: z.number().int(),
  remainingMs: z.number().int(),
  holdCount: z.number().int(),
  owner: holderOwner,
})

export const semaphoreStateSchema = z.object({
  key: z.string(),
  limit: z.number().int().describe('Fixed while anyone holds or waits'),
  permitsInUse: z.number().int().describe('Permits the live holds take'),
  holders: z.number().int().describe('Live holds'),
  waiters: z.number().int(),
  owners: ownersList,
  delayedUntil: delayedUntilField,
  holds: z
    .array(semaphoreHoldSchema)
    .optional()
    .describe('Admin views only (the listing, and inspect with ?holds=true): each live hold, by fence; never its token'),
})

export const semaphoreListSchema = z.object({
  items: z.array(semaphoreStateSchema),
  cursor: z.string().nullable(),
})
