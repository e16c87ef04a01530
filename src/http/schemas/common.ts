import { z } from 'zod'
import { parseDuration } from '../../contract/duration.js'
import { lockKeyRule, ownerRule, sessionIdRule, tokenRule } from '../../contract/patterns.js'

/**
 * The request parts every resource shares: keys, tokens, session ids, owners, durations. One zod
 * schema per request part and response (src/http/schemas/*); the routes validate with them and
 * openapi.yaml is generated from them (`npm run openapi`), so the contract and the code cannot drift apart.
 */

export interface Limits {
  maxTtlMs: number
  maxWaitMs: number
  maxSemaphoreLimit: number
  maxLockDelayMs: number
}

export const lockKeySchema = z
  .string()
  .regex(lockKeyRule.pattern, `lock keys are ${lockKeyRule.text}`)
  .describe(`Lock key: ${lockKeyRule.text}`)

export const tokenSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (sessionIdRule.pattern.test(value)) {
      ctx.addIssue({ code: 'custom', message: "this is a session id, not a lock token: send the hold's token (the grant's token field)" })
    } else if (!tokenRule.pattern.test(value)) {
      ctx.addIssue({ code: 'custom', message: `tokens are ${tokenRule.text}` })
    }
  })
  .meta({ pattern: tokenRule.pattern.source, description: `Owner token: ${tokenRule.text}` })

export const sessionIdSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (sessionIdRule.pattern.test(value)) return
    ctx.addIssue({
      code: 'custom',
      message: tokenRule.pattern.test(value)
        ? 'this looks like a lock token, not a session id: session ids come from POST /sessions and start with "s."'
        : `session ids are ${sessionIdRule.text}`,
    })
  })
  .meta({ pattern: sessionIdRule.pattern.source, description: `Session id (a secret, like a token): ${sessionIdRule.text}` })

export const ownerSchema = z
  .string()
  .regex(ownerRule.pattern, `owner: ${ownerRule.text}`)
  .describe(`Who holds it, e.g. billing-worker-3: ${ownerRule.text}. Shown by inspect, listings and a 409; not a secret`)

export const durationQuery = (name: string, min: number, max: number, maxName: string) =>
  z
    .string()
    .transform((text, ctx) => {
      const ms = parseDuration(text)
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a duration such as 1500, 1500ms, 1.5s, 2m or 1h (whole milliseconds)` })
        return z.NEVER
      }
      return ms
    })
    .pipe(z.number().min(min, `${name} must be at least ${min}ms`).max(max, `${name} must be at most ${max}ms (${maxName})`))
    .describe(`${name}: a whole number of ms, or a number with ms, s, m or h (e.g. 1.5s); ${min}ms … ${maxName}`)

export const ttlQuery = (limits: Limits) => durationQuery('ttl', 100, limits.maxTtlMs, 'MAX_TTL_MS')
export const waitQuery = (limits: Limits) => durationQuery('wait', 0, limits.maxWaitMs, 'MAX_WAIT_MS')
export const lockDelayQuery = (limits: Limits) =>
  durationQuery('lockDelay', 0, limits.maxLockDelayMs, 'MAX_LOCK_DELAY_MS')
    .optional()
    .describe(`The hold's lock-delay (as lockDelayMs): 0, 500ms, 5s; 0 … MAX_LOCK_DELAY_MS (${limits.maxLockDelayMs} ms)`)

const LOCK_DELAY_TEXT =
  "after this hold ends without its holder's release (it expired, was force-released, or its session lapsed), " +
  'what it freed is granted to nobody for this long (409 lock_delayed meanwhile; waiters are served when it ends). ' +
  '0 (the default) means none'

export const lockDelayMsSchema = (limits: Limits) =>
  z
    .number()
    .int('lockDelayMs must be a whole number of milliseconds')
    .min(0, 'lockDelayMs must be at least 0')
    .max(limits.maxLockDelayMs, `lockDelayMs must be at most ${limits.maxLockDelayMs} (MAX_LOCK_DELAY_MS)`)
    .optional()
    .describe(`Lock-delay in ms, 0 … MAX_LOCK_DELAY_MS (${limits.maxLockDelayMs}): ${LOCK_DELAY_TEXT}`)

/**
 * Fastify hands a missing body to the validator as null; the JSON parser refuses a literal `null`
 * body, so null here always means "no body": all defaults.
 */
export const optionalBody = <T extends z.ZodType>(schema: T) => schema.nullable().optional()

/** A body that may be left out, or be `{}`: a field in it is a 400 rather than silently ignored. */
export const noBody = optionalBody(z.strictObject({}))

export const ttlMsSchema = (limits: Limits) =>
  z
    .number()
    .int('ttlMs must be a whole number of milliseconds')
    .min(100, 'ttlMs must be at least 100')
    .max(limits.maxTtlMs, `ttlMs must be at most ${limits.maxTtlMs} (MAX_TTL_MS)`)
    .describe(`Lease length in ms, 100 … MAX_TTL_MS (${limits.maxTtlMs})`)

export const keyParams = z.strictObject({ key: lockKeySchema })

export const noQuery = z.strictObject({})

export const tokenHeaders = z.object({
  'lock-token': tokenSchema.optional().describe('Owner token (alternative to the body or query field)'),
})

export const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true')

export const holderOwner = z.string().optional().describe("The hold's owner label, when it was given one")

export const delayedUntilField = z
  .string()
  .optional()
  .describe("ISO 8601 time until which a lock-delay keeps new holds out (a hold ended without its holder's release); absent when none runs")

export const ownersList = z
  .array(z.string())
  .optional()
  .describe('The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one')
