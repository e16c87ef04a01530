import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray, slotsFrom } from './reply.js'

/** renew.lua: extend one hold of the token that owns it. */
export interface RenewInput {
  hold: HoldKind
  token: string
  /** 0: the TTL of the hold's latest grant or renew. */
  ttlMs: number
}

/** A semaphore's hold also says its permits, the semaphore's limit and its slots ("0,3"); any other: 0, 0, ''. */
export interface Renewed {
  code: typeof ReplyCode.RENEWED
  fence: number
  holdCount: number
  ttlMs: number
  permits: number
  limit: number
  slots: string
}

export type RenewReply = Renewed | { code: typeof ReplyCode.NOT_FOUND } | { code: typeof ReplyCode.NOT_OWNER }

/** A renewal's fixed fields; a semaphore's slots follow them. */
const RENEWED_FIELDS = 6

export const renewScript: Script<RenewInput, RenewReply> = {
  name: 'renew',
  args: (r) => [r.hold, r.token, r.ttlMs],
  decode(reply) {
    const r = replyArray('renew', reply)
    switch (r[0]) {
      case ReplyCode.RENEWED: {
        // Only a semaphore's hold has fields after the TTL (reading past an array's end is slow).
        const semaphore = r.length > RENEWED_FIELDS - 2
        return {
          code: ReplyCode.RENEWED,
          fence: intAt('renew', r, 1),
          holdCount: intAt('renew', r, 2),
          ttlMs: intAt('renew', r, 3),
          permits: semaphore ? intAt('renew', r, 4, 0) : 0,
          limit: semaphore ? intAt('renew', r, 5, 0) : 0,
          slots: semaphore ? slotsFrom('renew', r, RENEWED_FIELDS) : '',
        }
      }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
      case ReplyCode.NOT_OWNER:
        return { code: ReplyCode.NOT_OWNER }
    }
    throw new ScriptReplyError('renew', reply)
  },
  confirms: (reply) => reply.code > 0,
}
