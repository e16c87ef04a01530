import { z } from 'zod'
import { clockStates, nodeFailureReasons, voteStates } from '../../contract/words.js'

/** GET /healthz, /readyz (each Redis node's state, also in a 503's body), /metrics, /openapi.yaml. */

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
  restartedAt: z
    .string()
    .nullable()
    .describe('When the node last started anew (its run_id changed) since this replica met it: its holds may be gone; or null'),
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

export const readinessSchema = z.object({
  ready: z.boolean(),
  majority: z.number().int(),
  nodes: z.array(nodeStatusSchema),
})

export const healthSchema = z.object({ status: z.literal('ok') })

/** A body that is text, not JSON (/metrics, /openapi.yaml). */
export const textBody = (what: string) => z.string().describe(what)
