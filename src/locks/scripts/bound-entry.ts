import { holdModes, isWordOf } from '../../contract/words.js'
import type { LockMode } from '../types.js'

/**
 * A hold bound to a session, as the session's scripts keep it (include/session.lua):
 * "<mode>|<token>|<lock key>" (neither tokens nor lock keys contain '|').
 */
export interface BoundHold {
  entry: string
  kind: LockMode
  token: string
  key: string
}

export function boundEntry(hold: { mode: LockMode; token: string; key: string }): string {
  return `${hold.mode}|${hold.token}|${hold.key}`
}

/** An entry a session script sent back, or undefined for one that is not a bound hold. */
export function parseBoundEntry(entry: unknown): BoundHold | undefined {
  const [kind, token, key] = String(entry).split('|')
  if (kind === undefined || token === undefined || key === undefined || !isWordOf(holdModes, kind)) return undefined
  return { entry: String(entry), kind, token, key }
}

/** The bound holds among a reply's entries from `from` on (one that is not is skipped). */
export function boundHoldsFrom(reply: readonly unknown[], from: number): BoundHold[] {
  const holds: BoundHold[] = []
  for (let i = from; i < reply.length; i++) {
    const hold = parseBoundEntry(reply[i])
    if (hold) holds.push(hold)
  }
  return holds
}
