import { z } from 'zod'
import { holdModes } from '../../contract/words.js'
import { lockDelayMsSchema, optionalBody, ownerSchema, sessionIdSchema, ttlMsSchema, type Limits } from './common.js'

/** /sessions: open, keepalive, inspect, close. */

/** POST /sessions */
export function sessionOpenSchemas(limits: Limits) {
  return {
    body: optionalBody(
      z.strictObject({
        ttlMs: ttlMsSchema(limits)
          .optional()
          .describe(
            `The session's lease in ms (default DEFAULT_TTL_MS), 100 … MAX_TTL_MS (${limits.maxTtlMs}); ` + 'each keepalive renews it',
          ),
        owner: ownerSchema.optional().describe("The owner label of the session's holds that have none of their own"),
        lockDelayMs: lockDelayMsSchema(limits).describe(
          "The lock-delay of the session's holds that give none of their own, ms (0 … MAX_LOCK_DELAY_MS; default 0). " +
            "Closing the session (DELETE) is its holder's release: no delay; a session that lapses starts its holds' delays",
        ),
      }),
    ),
  }
}

export const sessionParams = z.strictObject({ id: sessionIdSchema })

export const sessionSchema = z.object({
  id: z.string().describe('The session id: a secret (keep it like a token); send it as `session` with an acquire'),
  ttlMs: z.number().int(),
  expiresAt: z.string().describe('ISO 8601 time at which the session lapses unless kept alive'),
  owner: z.string().optional(),
  lockDelayMs: z.number().int().describe("The lock-delay of the session's holds that give none of their own (0: none)"),
})

const sessionHoldSchema = z.object({
  key: z.string(),
  kind: z.enum(holdModes).describe('Which hold: /locks (exclusive), /rwlocks read or write, /semaphores (permit)'),
  fence: z.number().int(),
  remainingMs: z.number().int(),
})

const lostHoldSchema = z.object({ key: z.string(), kind: sessionHoldSchema.shape.kind })

export const keepaliveSchema = z.object({
  ttlMs: z.number().int(),
  expiresAt: z.string(),
  validityMs: z.number().int().describe('How long the holds may safely be acted on: ttlMs − elapsed − clock drift'),
  holds: z.array(sessionHoldSchema).describe('The holds the session still has, each renewed for ttlMs'),
  lost: z
    .array(lostHoldSchema)
    .describe('Holds bound to it that it no longer has (released, expired, force-released) or that could not be renewed'),
})

export const sessionStateSchema = z.object({
  ttlMs: z.number().int(),
  expiresAt: z.string(),
  remainingMs: z.number().int(),
  owner: z.string().optional(),
  holds: z.array(sessionHoldSchema),
})

export const sessionClosedSchema = z.object({
  closed: z.literal(true),
  holds: z.array(lostHoldSchema.extend({ released: z.boolean().describe('false: it had already gone') })),
})
