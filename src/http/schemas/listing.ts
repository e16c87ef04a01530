import { z } from 'zod'
import { keyPrefixRule } from '../../contract/patterns.js'
import { wholeNumber } from '../../contract/whole-number.js'

/** Admin: the query of GET /locks, /rwlocks and /semaphores (a page of held keys). */
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
