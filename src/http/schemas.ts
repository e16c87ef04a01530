import { z } from 'zod'
import { errorCodes, errorStatus } from '../contract/error-codes.js'
import { parseDuration } from '../contract/duration.js'
import { keyPrefixRule, lockKeyRule, ownerRule, sessionIdRule, tokenRule } from '../contract/patterns.js'
import { wholeNumber } from '../contract/whole-number.js'
import type { GrantBody, PermitGrantBody, ReleaseBody } from '../contract/wire.js'
import { clockStates, holdModes, lostReasons, modesOf, nodeFailureReasons, voteStates } from '../contract/words.js'

/**
 * One zod schema per request part and response; the routes validate with them and openapi.yaml is
 * generated from them (`npm run openapi`), so the contract and the code cannot drift apart.
 */

export interface Limits {
  maxTtlMs: number
  maxWaitMs: number
  maxSemaphoreLimit: number
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

const durationQuery = (name: string, min: number, max: number, maxName: string) =>
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

const ttlQuery = (limits: Limits) => durationQuery('ttl', 100, limits.maxTtlMs, 'MAX_TTL_MS')
const waitQuery = (limits: Limits) => durationQuery('wait', 0, limits.maxWaitMs, 'MAX_WAIT_MS')

/**
 * Fastify hands a missing body to the validator as null; the JSON parser refuses a literal `null`
 * body, so null here always means "no body": all defaults.
 */
const optionalBody = <T extends z.ZodType>(schema: T) => schema.nullable().optional()

const ttlMsSchema = (limits: Limits) =>
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

/** What every acquire takes, as query parameters and as body fields. */
function acquireFields(limits: Limits) {
  return {
    query: {
      ttl: ttlQuery(limits)
        .optional()
        .describe(
          'Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS for a new hold; a re-acquire by the holder keeps its latest TTL',
        ),
      wait: waitQuery(limits).optional(),
      owner: ownerSchema.optional().describe(`The hold's owner label (as the body's owner): ${ownerRule.text}`),
      session: sessionIdSchema.optional().describe("Bind the hold to this session (as the body's session)"),
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

const permitCount = (name: string, what: string, limits: Limits) =>
  z
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(1, `${name} must be at least 1`)
    .max(limits.maxSemaphoreLimit, `${name} must be at most ${limits.maxSemaphoreLimit} (MAX_SEMAPHORE_LIMIT)`)
    .describe(`${what}. 1 … MAX_SEMAPHORE_LIMIT (${limits.maxSemaphoreLimit})`)

const semaphoreLimitText =
  "The semaphore's limit: how many permits its holds may take in all. Required (as ?limit= or the body's limit); fixed while anyone holds or waits (another value: 409 limit_mismatch)"
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

const flag = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true')

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

export const permitGrantSchema = grantSchema
  .extend({
    mode: z.enum(modesOf.semaphores),
    permits: z.number().int().describe('The permits this hold takes'),
    limit: z.number().int().describe("The semaphore's limit (fixed while anyone holds or waits)"),
  })
  .describe("A semaphore's hold") satisfies z.ZodType<PermitGrantBody>

export const releaseResultSchema = z.object({
  key: z.string(),
  released: z.boolean().describe('true when the lock is free; false while a reentrant hold still has holds'),
  holdCount: z.number().int(),
}) satisfies z.ZodType<ReleaseBody>

const holderOwner = z.string().optional().describe("The hold's owner label, when it was given one")
const ownersList = z
  .array(z.string())
  .optional()
  .describe('The owner labels of the live holds that have one (the writer first), at most 10; absent when none has one')

export const lockStateSchema = z.object({
  key: z.string(),
  mode: z.enum(modesOf.locks),
  fence: z.number().int(),
  remainingMs: z.number().int(),
  holdCount: z.number().int(),
  waiters: z.number().int(),
  owner: holderOwner,
})

export const rwInspectQuery = z.strictObject({
  readers: flag.optional().describe('Admin: also list each read hold (fence, remaining time, count), e.g. to force-release one by fence'),
})

export const listQuery = z.strictObject({
  prefix: z.string().regex(keyPrefixRule.pattern, `prefix: ${keyPrefixRule.text}`).optional().describe('Only keys that start with this'),
  limit: wholeNumber('limit', 1, 1000)
    .optional()
    .describe('Stop scanning once this many are found (default 100; a page may hold a few more)'),
  cursor: z
    .string()
    .regex(/^\d{1,2}\.\d{1,20}(\.\d{1,5})?$/, 'cursor must be a cursor from a previous page')
    .optional(),
})

export const rwLockStateSchema = z.object({
  key: z.string(),
  writer: z
    .object({ fence: z.number().int(), remainingMs: z.number().int(), owner: holderOwner })
    .nullable()
    .describe('The write hold, or null'),
  readers: z.number().int().describe('Live read holds'),
  readerHolds: z
    .array(
      z.object({
        fence: z.number().int().describe('Its fence: what DELETE /rwlocks/{key}/read?force=true&fence= takes'),
        remainingMs: z.number().int(),
        holdCount: z.number().int(),
        owner: holderOwner,
      }),
    )
    .optional()
    .describe('Admin views only (the listing, and inspect with ?readers=true): each live read hold, by fence; never its token'),
  writerWaiting: z.boolean().describe('A writer is waiting: newly arriving readers queue behind it'),
  waiters: z.number().int(),
  owners: ownersList,
})

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
  holds: z
    .array(semaphoreHoldSchema)
    .optional()
    .describe('Admin views only (the listing, and inspect with ?holds=true): each live hold, by fence; never its token'),
})

export const semaphoreListSchema = z.object({
  items: z.array(semaphoreStateSchema),
  cursor: z.string().nullable(),
})

export const lockListSchema = z.object({
  items: z.array(lockStateSchema),
  cursor: z.string().nullable().describe('Pass it back for the next page; null: the scan is complete'),
})

export const rwLockListSchema = z.object({
  items: z.array(rwLockStateSchema),
  cursor: z.string().nullable(),
})

export const nodeStatusSchema = z.object({
  index: z.number().int(),
  address: z.string().describe('host:port (never a password)'),
  up: z.boolean(),
  latencyMs: z.number().nullable().describe('latency of the last successful command, ms'),
  vote: z
    .enum(voteStates)
    .describe(
      'Whether the answers of this node count toward a majority now (counts), or why not: not connected, not yet identified, ' +
        'a replica, in its quarantine after a restart, or its clock misbehaved',
    ),
  quarantineMs: z.number().describe('ms until a node that restarted recently counts toward grants again (0: it counts)'),
  clock: z
    .object({
      state: z.enum(clockStates),
      rate: z.number().nullable().describe("the node's clock rate against this replica's (1 = same speed; null until two samples)"),
      trustedInMs: z.number().describe('ms until an untrusted clock counts again if it keeps behaving (0: trusted)'),
    })
    .describe("How the node's clock compares with this replica's monotonic clock (sampled every second)"),
  lastError: z
    .object({
      reason: z
        .enum(nodeFailureReasons)
        .describe('auth (NOAUTH, WRONGPASS, NOPERM), refused, timeout, not_redis (the port speaks another protocol), replica, tls, other'),
      message: z.string().describe('What failed, in one sentence (never a password)'),
      at: z.string().describe('ISO 8601 time of the failure'),
    })
    .nullable()
    .describe('The latest failure talking to this node (kept after it recovers; compare `at`), or null'),
})

export const errorSchema = z
  .object({
    error: z.enum(errorCodes),
    message: z.string(),
    key: z.string().optional(),
    retryAfterMs: z.number().int().optional(),
    waitedMs: z.number().int().optional().describe('How long the request waited in line before giving up'),
    owners: z
      .array(z.string())
      .optional()
      .describe('409 lock_held: the owner labels of the holds in the way (those that have one; at most 10; absent when none has one)'),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    allow: z.array(z.string()).optional().describe('405: the methods this path takes (also in the Allow header)'),
    reason: z.string().optional(),
    answered: z.number().int().optional().describe('Nodes that answered'),
    voting: z.number().int().optional().describe('Nodes that answered and may vote (the vote rule)'),
    needed: z.number().int().optional().describe('Votes a decision needs (a majority)'),
    nodes: z.array(nodeStatusSchema.extend({ answered: z.boolean() })).optional(),
  })
  .describe('Every error: { error: code, message: one human sentence, ...details }')

export const readinessSchema = z.object({
  ready: z.boolean(),
  majority: z.number().int(),
  nodes: z.array(nodeStatusSchema),
})

export const healthSchema = z.object({ status: z.literal('ok') })

/** A body that is text, not JSON (/metrics, /openapi.yaml). */
export const textBody = (what: string) => z.string().describe(what)

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

/** POST /sessions */
export function sessionOpenSchemas(limits: Limits) {
  return {
    body: optionalBody(
      z.strictObject({
        ttlMs: ttlMsSchema(limits)
          .optional()
          .describe(`The session's lease in ms (default DEFAULT_TTL_MS), 100 … MAX_TTL_MS (${limits.maxTtlMs}); each keepalive renews it`),
        owner: ownerSchema.optional().describe("The owner label of the session's holds that have none of their own"),
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

/** GET …/watch: the hold's token (or the Lock-Token header) and how long to wait. */
export function watchSchemas(limits: Limits) {
  const wait = waitQuery(limits)
    .optional()
    .describe('How long to wait for the hold to go (default 30 s, at most MAX_WAIT_MS): 1500, 1500ms, 1.5s, 2m')
  return {
    hold: z.strictObject({ token: tokenSchema.optional().describe("The hold's token (or the Lock-Token header)"), wait }),
    session: z.strictObject({ wait }),
  }
}

export const watchResultSchema = z
  .object({
    held: z.boolean().describe('false: the hold (or session) is gone; true: still held when the wait ran out'),
    reason: z
      .enum(lostReasons)
      .optional()
      .describe(
        'held false: why. expired (its lease ran out, or this token never held it), released, force_released (an admin), ' +
          'session_lost (its session was closed or lapsed). A session itself: released (closed) or expired',
      ),
    at: z.string().optional().describe('held false: when it went (ISO 8601)'),
    remainingMs: z.number().int().optional().describe('held true: its remaining lease'),
  })
  .describe(
    'With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event (or the stream ends when the wait runs out)',
  )
