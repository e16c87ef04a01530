import { z } from 'zod'
import { lockKeyRule, ownerRule } from '../../contract/patterns.js'
import { wholeNumber } from '../../contract/whole-number.js'
import { electionEvents, vacancyReasons } from '../../contract/words.js'
import {
  durationQuery,
  flag,
  lockKeySchema,
  optionalBody,
  sessionIdSchema,
  tokenSchema,
  ttlMsSchema,
  ttlQuery,
  waitQuery,
  type Limits,
} from './common.js'

/** /elections/:name — leader election: campaign, proclaim, renew, resign, inspect, observe, watch. */

/** The most a leader's value may take, in bytes of UTF-8. */
export const MAX_VALUE_BYTES = 4096

export const electionParams = z.strictObject({
  name: lockKeySchema.describe(`Election name: ${lockKeyRule.text} (names as lock keys, in a namespace of their own)`),
})

export const candidateSchema = z
  .string()
  .regex(ownerRule.pattern, `candidate: ${ownerRule.text}`)
  .describe(`Who campaigns, e.g. scheduler-2: ${ownerRule.text}. Shown as the leader's candidate; not a secret`)

export const valueSchema = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_VALUE_BYTES, `value must be at most ${MAX_VALUE_BYTES} bytes (UTF-8)`)
  .describe(`What the leader announces (e.g. its address), at most ${MAX_VALUE_BYTES} bytes; shown to every observer`)

export function campaignSchemas(limits: Limits) {
  return {
    querystring: z.strictObject({
      candidate: candidateSchema.optional().describe("The candidate's label (as the body's candidate)"),
      value: valueSchema.optional().describe("The value (as the body's value)"),
      ttl: ttlQuery(limits).optional().describe('Lease length (as ttlMs): 1500, 1500ms, 1.5s, 2m, 1h. Default: DEFAULT_TTL_MS'),
      wait: waitQuery(limits).optional(),
      session: sessionIdSchema.optional().describe("Bind the leadership to this session (as the body's session)"),
    }),
    body: optionalBody(
      z
        .strictObject({
          candidate: candidateSchema.optional().describe('Required here or as ?candidate='),
          value: valueSchema.optional(),
          ttlMs: ttlMsSchema(limits)
            .optional()
            .describe(`Lease length in ms, 100 … MAX_TTL_MS (${limits.maxTtlMs}). Default: DEFAULT_TTL_MS`),
          waitMs: z
            .number()
            .int('waitMs must be a whole number of milliseconds')
            .min(0, 'waitMs must be at least 0')
            .max(limits.maxWaitMs, `waitMs must be at most ${limits.maxWaitMs} (MAX_WAIT_MS)`)
            .optional()
            .describe(`How long to wait in line for leadership, ms (0: try once; at most MAX_WAIT_MS, ${limits.maxWaitMs})`),
          session: sessionIdSchema
            .optional()
            .describe("Bind the leadership to this session: its lease is the session's, and it ends with the session"),
          token: tokenSchema
            .optional()
            .describe("Caller-chosen token; the server makes one when absent. The leader's own token again: 200, the same term"),
        })
        .describe('candidate is required (here or in the query)'),
    ),
  }
}

const sinceField = z.string().describe('When this term began (ISO 8601)')

export const leadershipSchema = z
  .object({
    name: z.string(),
    term: z
      .number()
      .int()
      .positive()
      .describe("The term: this leadership's fencing token, strictly greater than every term before it in this election"),
    token: z.string().describe('The leader token: keep it to renew, proclaim and resign'),
    candidate: z.string(),
    value: z.string().nullable().describe('The value, or null when none was given'),
    revision: z.number().int().describe('1 when elected, + 1 per proclaim'),
    since: sinceField,
    ttlMs: z.number().int(),
    validityMs: z.number().int().describe('How long the leader may safely act as leader: ttlMs − elapsed − clock drift'),
    expiresAt: z.string().describe('ISO 8601 time at which the leadership lapses unless renewed'),
  })
  .describe('Leadership')

export function renewLeadershipSchemas(limits: Limits) {
  return {
    querystring: z.strictObject({ ttl: ttlQuery(limits).optional() }),
    body: optionalBody(
      z.strictObject({
        token: tokenSchema.optional().describe('Leader token (or the Lock-Token header)'),
        ttlMs: ttlMsSchema(limits).optional().describe('New lease length in ms; default: the TTL of the latest campaign or renew'),
      }),
    ),
  }
}

export const renewedLeadershipSchema = z.object({
  name: z.string(),
  term: z.number().int(),
  token: z.string(),
  ttlMs: z.number().int(),
  validityMs: z.number().int(),
  expiresAt: z.string(),
})

export const proclaimSchemas = {
  querystring: z.strictObject({}),
  body: z.strictObject({
    token: tokenSchema.optional().describe('Leader token (or the Lock-Token header)'),
    value: valueSchema,
  }),
}

export const proclaimedSchema = z.object({
  name: z.string(),
  term: z.number().int(),
  revision: z.number().int().describe('The revision this value has: + 1 per proclaim'),
  value: z.string(),
})

export const resignSchemas = {
  querystring: z.strictObject({
    token: tokenSchema.optional(),
    force: flag.optional().describe('Admin: end the term whoever leads (no token needed): observers see vacant, force_released'),
  }),
  body: optionalBody(z.strictObject({ token: tokenSchema.optional() })),
}

export const resignedSchema = z.object({
  name: z.string(),
  resigned: z.literal(true).describe('The term is over'),
})

const leaderSchema = z
  .object({
    candidate: z.string(),
    value: z.string().nullable(),
    term: z.number().int(),
    revision: z.number().int(),
    since: sinceField,
    remainingMs: z.number().int().describe('Until the leadership lapses unless renewed'),
  })
  .describe('The leader (never its token)')

export const electionStateSchema = z.object({
  name: z.string(),
  leader: leaderSchema.nullable().describe('null: no leader now'),
  term: z.number().int().describe("The leader's term; with no leader, the latest term begun (0: none remembered)"),
  candidates: z.number().int().describe('Candidates waiting in line'),
  transitions: z.number().int().describe('Terms begun in this election (kept as long as its term counter: 7 days after the last)'),
})

export const electionListSchema = z.object({
  items: z.array(electionStateSchema),
  cursor: z.string().nullable().describe('Pass it back for the next page; null: the scan is complete'),
})

export function observeSchemas(limits: { maxWatchMs: number }) {
  return {
    querystring: z.strictObject({
      after: wholeNumber('after', 0, Number.MAX_SAFE_INTEGER)
        .optional()
        .describe("The term you saw (an answer's term, from any replica): answers at once when the election has moved on; absent: at once"),
      revision: wholeNumber('revision', 0, Number.MAX_SAFE_INTEGER)
        .optional()
        .describe("With after: the revision you saw (an answer's revision; 0 for no leader), so that a proclaim or a vacancy counts too"),
      wait: durationQuery('wait', 0, limits.maxWatchMs, 'MAX_WATCH_MS')
        .optional()
        .describe('How long to wait for a change (default 30 s, at most MAX_WATCH_MS): 1500, 1500ms, 1.5s, 2m'),
    }),
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(/^\d{1,16}\.\d{1,16}$/, 'Last-Event-ID: "<term>.<revision>", an event\'s id')
        .optional()
        .describe('An event stream resumed (as EventSource does): the id of the last event seen, as after and revision'),
    }),
  }
}

export const observedSchema = z
  .object({
    name: z.string(),
    term: z.number().int().describe("The leader's term; with no leader, the term that ended last (0: none known)"),
    revision: z.number().int().describe("The leader's revision (1 when elected, + 1 per proclaim); 0 with no leader"),
    leader: leaderSchema.nullable(),
    reason: z.enum(vacancyReasons).optional().describe('No leader: why the last term ended, when this replica saw it end'),
    changed: z.boolean().describe('false: the wait ran out on the state given by after and revision'),
  })
  .describe(
    'Pass term and revision back as after and revision. With Accept: text/event-stream, Server-Sent Events instead: ' +
      'elected { term, revision, candidate, value, since }, proclaimed { term, revision, value }, ' +
      'vacant { term, revision: 0, reason? }, ' +
      'resync { term, revision, leader } (a state to replace yours); ' +
      `events: ${electionEvents.join(', ')}; each with id "<term>.<revision>"`,
  )
