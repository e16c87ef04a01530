import { z } from 'zod'
import { lostReasons } from '../../contract/words.js'
import { durationQuery, tokenSchema } from './common.js'

/** GET …/watch: the hold's token (or the Lock-Token header) and how long to wait. */
export function watchSchemas(limits: { maxWatchMs: number }) {
  const wait = durationQuery('wait', 0, limits.maxWatchMs, 'MAX_WATCH_MS')
    .optional()
    .describe('How long to wait for the hold to go (default 30 s, at most MAX_WATCH_MS, 10 min by default): 1500, 1500ms, 1.5s, 2m')
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
        'held false: why. expired (its lease ran out while watched), released, force_released (an admin), ' +
          'session_lost (its session was closed or lapsed). A session itself: released (closed) or expired',
      ),
    at: z.string().optional().describe('held false: when it went (ISO 8601)'),
    remainingMs: z.number().int().optional().describe('held true: its remaining lease'),
  })
  .describe(
    'With Accept: text/event-stream, the same as Server-Sent Events: `held` events, then one `lost` event ' +
      '(or the stream ends when the wait runs out)',
  )
