import { ReplyCode, ScriptReplyError, type Script } from '../../redis/scripts.js'
import type { HoldKind } from '../types.js'
import { intAt, replyArray } from './reply.js'

/** hold_renew_bound.lua: a session's keepalive renews one of its holds, if it is still bound to the session. */
export interface HoldRenewBoundInput {
  hold: HoldKind
  token: string
  /** The session's reference (sessionRef). */
  ref: string
  ttlMs: number
}

export type HoldRenewBoundReply =
  /** slots: a semaphore's hold's slots, joined by ',' ('' for any other hold). */
  { code: typeof ReplyCode.RENEWED; fence: number; holdCount: number; ttlMs: number; slots: string } | { code: typeof ReplyCode.NOT_FOUND }

/** The fields before a semaphore's slots: code, fence, holdCount, ttlMs, permits, limit. */
const SLOTS_FROM = 6

export const holdRenewBoundScript: Script<HoldRenewBoundInput, HoldRenewBoundReply> = {
  name: 'hold_renew_bound',
  args: (h) => [h.hold, h.token, h.ref, h.ttlMs],
  decode(reply) {
    const r = replyArray('hold_renew_bound', reply)
    switch (r[0]) {
      case ReplyCode.RENEWED: {
        let slots = ''
        for (let i = SLOTS_FROM; i < r.length; i++) slots += i === SLOTS_FROM ? String(r[i]) : `,${String(r[i])}`
        const fence = intAt('hold_renew_bound', r, 1)
        return { code: ReplyCode.RENEWED, fence, holdCount: intAt('hold_renew_bound', r, 2), ttlMs: intAt('hold_renew_bound', r, 3), slots }
      }
      case ReplyCode.NOT_FOUND:
        return { code: ReplyCode.NOT_FOUND }
    }
    throw new ScriptReplyError('hold_renew_bound', reply)
  },
}
