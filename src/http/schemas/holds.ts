import { z } from 'zod'
import { ownerRule } from '../../contract/patterns.js'
import { wholeNumber } from '../../contract/whole-number.js'
import type { GrantBody, ReleaseBody } from '../../contract/wire.js'
import { modesOf } from '../../contract/words.js'
import {
  flag,
  lockDelayMsSchema,
  lockDelayQuery,
  optionalBody,
  ownerSchema,
  sessionIdSchema,
  tokenSchema,
  ttlMsSchema,
  ttlQuery,
  waitQuery,
  type Limits,
} from './common.js'

/** What every kind of hold shares: acquire, renew and release, and the grant they answer with. */

/** What every acquire takes, as query parameters and as body fields. */
export function acquireFields(limits: Limits) {
  return {
    query: {
      ttl: ttlQuery(limits)
        .optional()
        .describe(
          'Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; ' +
            'a re-acquire by the holder keeps its latest TTL',
        ),
      wait: waitQuery(limits).optional(),
      owner: ownerSchema.optional().describe(`The hold's owner label (as the body's owner): ${ownerRule.text}`),
      session: sessionIdSchema.optional().describe("Bind the hold to this session (as the body's session)"),
      lockDelay: lockDelayQuery(limits),
    },
    body: {
      ttlMs: ttlMsSchema(limits)
        .optional()
        .describe(
          `Lease length in ms, 100 … MAX_TTL_MS (${limits.maxTtlMs}). Default: DEFAULT_TTL_MS for a new hold; ` +
            'a re-acquire by the holder without it keeps the TTL of its latest grant or renew (as renew does)',
        ),
      waitMs: z
        .number()
        .int('waitMs must be a whole number of milliseconds')
        .min(0, 'waitMs must be at least 0')
        .max(limits.maxWaitMs, `waitMs must be at most ${limits.maxWaitMs} (MAX_WAIT_MS)`)
        .optional()
        .describe(`How long to wait in line when the lock is held, ms (0: try once; at most MAX_WAIT_MS, ${limits.maxWaitMs})`),
      token: tokenSchema.optional().describe('Caller-chosen owner token; the server makes a 128-bit random one when absent'),
      reentrant: z.boolean().optional().describe('When this token already holds the lock: count +1 instead of an idempotent re-grant'),
      owner: ownerSchema.optional(),
      session: sessionIdSchema
        .optional()
        .describe(
          "Bind the hold to this session (POST /sessions): its lease is the session's, renewed by the session's keepalive, " +
            "freed with the session. ttlMs, if given, must be the session's TTL",
        ),
      lockDelayMs: lockDelayMsSchema(limits),
    },
  }
}

export function acquireSchemas(limits: Limits) {
  const fields = acquireFields(limits)
  return {
    querystring: z.strictObject(fields.query),
    body: optionalBody(z.strictObject(fields.body).describe('Every field optional; an empty body means all defaults')),
  }
}

export function renewSchemas(limits: Limits) {
  return {
    querystring: z.strictObject({ ttl: ttlQuery(limits).optional() }),
    body: optionalBody(
      z.strictObject({
        token: tokenSchema.optional().describe('Owner token (or the Lock-Token header)'),
        ttlMs: ttlMsSchema(limits).optional().describe('New lease length in ms; default: the TTL of the latest grant or renew'),
      }),
    ),
  }
}

export const releaseSchemas = {
  querystring: z.strictObject({
    token: tokenSchema.optional(),
    force: flag.optional().describe('Admin: drop the hold whoever holds it (no token needed)'),
    fence: wholeNumber('fence', 1, Number.MAX_SAFE_INTEGER)
      .optional()
      .describe('With force on a read hold or a semaphore: the fence of the hold to drop'),
  }),
  body: optionalBody(z.strictObject({ token: tokenSchema.optional() })),
}

export const grantSchema = z
  .object({
    key: z.string(),
    mode: z.enum([...modesOf.locks, ...modesOf.rwlocks]),
    token: z.string().describe('The owner token: keep it to renew and release'),
    fence: z.number().int().positive().describe('Fencing token: strictly greater than every fence issued before for this key'),
    ttlMs: z.number().int(),
    validityMs: z.number().int().describe('How long the holder may safely act: ttlMs − elapsed − clock drift'),
    expiresAt: z.string().describe('ISO 8601 time at which Redis drops the hold (grant time + ttlMs)'),
    holdCount: z.number().int(),
  })
  .describe('A hold') satisfies z.ZodType<GrantBody>

export const releaseResultSchema = z.object({
  key: z.string(),
  released: z.boolean().describe('true when the lock is free; false while a reentrant hold still has holds'),
  holdCount: z.number().int(),
}) satisfies z.ZodType<ReleaseBody>
