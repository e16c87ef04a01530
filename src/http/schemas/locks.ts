import { z } from 'zod'
import { modesOf } from '../../contract/words.js'
import { delayedUntilField, flag, holderOwner, ownersList } from './common.js'

/** What inspect and the listing show of /locks (exclusive) and /rwlocks (read-write) keys. */

export const lockStateSchema = z.object({
  key: z.string(),
  mode: z.enum(modesOf.locks),
  fence: z.number().int(),
  remainingMs: z.number().int(),
  holdCount: z.number().int(),
  waiters: z.number().int(),
  owner: holderOwner,
  delayedUntil: delayedUntilField,
})

export const lockListSchema = z.object({
  items: z.array(lockStateSchema),
  cursor: z.string().nullable().describe('Pass it back for the next page; null: the scan is complete'),
})

export const rwInspectQuery = z.strictObject({
  readers: flag.optional().describe('Admin: also list each read hold (fence, remaining time, count), e.g. to force-release one by fence'),
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
  delayedUntil: delayedUntilField,
})

export const rwLockListSchema = z.object({
  items: z.array(rwLockStateSchema),
  cursor: z.string().nullable(),
})
