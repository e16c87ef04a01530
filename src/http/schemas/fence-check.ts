import { z } from 'zod'
import { wholeNumber } from '../../contract/whole-number.js'
import { lockKeySchema } from './common.js'
import { electionParams } from './elections.js'

/** GET …/:key/fence/:fence: the fence a resource was handed, and what the service says of it. */

const fence = wholeNumber('fence', 1, Number.MAX_SAFE_INTEGER)

export const fenceCheckParams = z.strictObject({
  key: lockKeySchema,
  fence: fence.describe('The fence to check: a whole number, 1 … 2^53 − 1'),
})

/** An election's: its name, and a term (the leader's hold's fence). */
export const termCheckParams = z.strictObject({
  name: electionParams.shape.name,
  fence: fence.describe("The term to check (a leader's fence): a whole number, 1 … 2^53 − 1"),
})

export const fenceCheckSchema = z
  .object({
    current: z.boolean().describe('true only while a live hold carries exactly this fence (a read or semaphore hold: any one of them)'),
    fence: z
      .number()
      .int()
      .nullable()
      .describe(
        "The fence asked about when it is current; else the live hold's fence (several read or semaphore holds: the highest, " +
          'the newest); null when nothing is held. current is always fence == the fence asked about',
      ),
    held: z.boolean().describe('Anything is held there, by this fence or another'),
  })
  .describe("A snapshot: the hold may end the moment after. Pair it with the resource's own write window (docs: Protecting a resource)")
