import { ScriptReplyError, type ScriptName } from '../../redis/scripts.js'

/**
 * Reading a script's reply by position, for the decoders in this folder only (every other module reads
 * decoded values). Redis turns a Lua table into an array and a Lua number into an integer.
 */
export function replyArray(script: ScriptName, reply: unknown): readonly unknown[] {
  if (!Array.isArray(reply) || reply.length === 0) throw new ScriptReplyError(script, reply)
  return reply
}

/** The integer at `index` (absent: `fallback`, or a ScriptReplyError when none is given). */
export function intAt(script: ScriptName, reply: readonly unknown[], index: number, fallback?: number): number {
  const value = reply[index]
  if (typeof value === 'number') return value
  if (value === undefined && fallback !== undefined) return fallback
  throw new ScriptReplyError(script, reply)
}

/** The string at `index` (Redis sends a Lua string as one; absent: ''). */
export function textAt(script: ScriptName, reply: readonly unknown[], index: number): string {
  const value = reply[index]
  if (value === undefined) return ''
  if (typeof value === 'string') return value
  throw new ScriptReplyError(script, reply)
}

/**
 * The integers from `index` on, as one string ("0,3"): a semaphore's slots, which its hold's replies
 * list last; '' when there are none (any other hold).
 */
export function slotsFrom(script: ScriptName, reply: readonly unknown[], index: number): string {
  if (reply.length <= index) return ''
  let slots = String(intAt(script, reply, index))
  for (let i = index + 1; i < reply.length; i++) slots += `,${intAt(script, reply, i)}`
  return slots
}

/**
 * A reply that is one integer rather than a table: a flag (1 or 0) or a count, never a code. Its
 * script's decoder names what it counts.
 */
export function integerReply(script: ScriptName, reply: unknown): number {
  if (typeof reply !== 'number') throw new ScriptReplyError(script, reply)
  return reply
}

/** A reply that is one of `codes` alone (`{ NOT_FOUND }`): decoded as `{ code }`. */
export function codeOnly<C extends number>(script: ScriptName, reply: unknown, codes: readonly C[]): { code: C } {
  const code = replyArray(script, reply)[0]
  for (const known of codes) if (code === known) return { code: known }
  throw new ScriptReplyError(script, reply)
}
