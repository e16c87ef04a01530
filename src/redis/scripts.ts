import { readFileSync } from 'node:fs'

/**
 * The Lua scripts in src/lua, read once at start. A line `--@include NAME` is replaced by
 * src/lua/include/NAME.lua, so helpers shared by several scripts live in one file; every script
 * starts with include/settings.lua, its `{{NAME}}` placeholders filled from ScriptSettings, and the
 * reply codes, then include/clock.lua (TIME, formatting) — after the fast path in a script that has one
 * (withClockWhereNeeded). Defining an include's functions is part of every call, so a script's fast
 * path comes before every include.
 * src/redis/script-call.ts runs each one by EVALSHA (EVAL on a connection's first call, and after
 * a SCRIPT FLUSH).
 */
export const scriptNames = [
  'acquire',
  'renew',
  'release',
  'rollback',
  'fence_commit',
  'inspect',
  'fence_check',
  'leave',
  'touch',
  'force_release',
  'hold_label',
  'owners',
  'hold_renew_bound',
  'hold_drop_bound',
  'hold_state',
  'session_open',
  'session_keepalive',
  'session_bind',
  'session_unbind',
  'session_close',
  'session_show',
  'key_sessions',
  'sessions_index',
  'watch',
  'election_stamp',
  'election_state',
] as const

export type ScriptName = (typeof scriptNames)[number]

/**
 * How many of a script's arguments are keys: its `--@keys N` header line (read at load, the one place
 * it is declared).
 */
export function keyCountOf(name: ScriptName): number {
  const count = keyCounts.get(name)
  if (count === undefined) throw new Error(`${name}.lua has not been loaded (loadScripts)`)
  return count
}

const keyCounts = new Map<ScriptName, number>()

function declaredKeyCount(name: string, source: string): number {
  const match = /^--@keys (\d+)$/m.exec(source)
  if (!match) throw new Error(`src/lua/${name}.lua: no "--@keys N" header line`)
  return Number(match[1])
}

const luaDir = new URL('../lua/', import.meta.url)

function readLua(relative: string): string {
  return readFileSync(new URL(relative, luaDir), 'utf8')
}

/**
 * A fast path (between `--@fast-path` and `--@end-fast-path`) defines nothing it does not call: every
 * definition, even of a function never called, is work on every call (release.lua's hand-off includes
 * include/fence.lua inside its own branch). So the clock's functions, and in a lock script the names of
 * the lock's other keys (include/lock_keys.lua), come where its general path starts; a script without
 * a fast path gets the clock first.
 */
function withClockWhereNeeded(source: string, clock: string): string {
  const end = /^--@end-fast-path$/m
  if (!end.test(source)) return `${clock}\n${source}`
  return source.replace(end, () => `--@end-fast-path\n${clock}\n--@include lock_keys`)
}

/**
 * The text Redis is sent and the process keeps, less its comment lines (the `--@` markers stay): the
 * comments are for readers of src/lua, and their dashes and arrows would make every script a two-byte
 * string in memory (~1 MiB for all of them, against ~0.25 MiB without).
 */
function withoutCommentLines(text: string): string {
  return text.replace(/^[ \t]*--(?!@).*\n/gm, '')
}

function expandIncludes(source: string): string {
  return source.replace(/^--@include (\w+)$/gm, (_line, name: string) => readLua(`include/${name}.lua`))
}

/** Per-service settings the scripts read as constants (include/settings.lua). */
export interface ScriptSettings {
  /** How long a fence counter outlives its last use (FENCE_RETENTION_MS); half of it bounds the fence hint's lead. */
  FENCE_RETENTION_MS: number
  MAX_READERS: number
  MAX_WAITERS: number
  WAITER_LEASE_MS: number
  /** KEY_PREFIX + 'wake:' (lock-key characters only: safe inside a Lua string) */
  WAKE_PREFIX: string
  /** How long the reason a watched hold went is kept (include/lost.lua) */
  GONE_MEMORY_MS: number
  /** KEY_PREFIX + 'lost': where the scripts say a watched hold or a session went */
  LOST_CHANNEL: string
  /** 1 (default): PUBLISH's count of receivers is evidence (one Redis, Sentinel); 0: not (a Redis Cluster). */
  WAKE_COUNTS_RECEIVERS?: 0 | 1
}

export function loadScripts(given: ScriptSettings): ReadonlyMap<ScriptName, string> {
  const settings: ScriptSettings = { WAKE_COUNTS_RECEIVERS: 1, ...given }
  const filled = readLua('include/settings.lua').replace(/\{\{(\w+)\}\}/g, (_m, name: string) => {
    const value = settings[name as keyof ScriptSettings]
    if (value === undefined) throw new Error(`include/settings.lua: no setting ${name}`)
    return String(value)
  })
  const header = `${filled}\n${luaConstants(ReplyCode)}`
  const clock = readLua('include/clock.lua')
  return new Map(
    // Read on every call, not cached: the process keeps each script's text once (in the returned map).
    scriptNames.map((name) => {
      const source = readLua(`${name}.lua`)
      keyCounts.set(name, declaredKeyCount(name, source))
      return [name, withoutCommentLines(`${header}\n${expandIncludes(withClockWhereNeeded(source, clock))}`)]
    }),
  )
}

/**
 * The codes in the first slot of a script's reply, declared once: loadScripts writes them into every
 * script as Lua constants (`local GRANTED = 1`), so no script returns a bare number, and each script's
 * decoder reads them back by name. Positive: it did what was asked (1 and 2 mean what the script's
 * header says); negative: why not, the same for every script.
 */
export const ReplyCode = {
  GRANTED: 1,
  REGRANTED: 2,
  RENEWED: 1,
  RELEASED: 1,
  DECREMENTED: 2,
  /** fence_commit.lua: the fence is this grant's on the node. */
  COMMITTED: 1,
  /** fence_commit.lua, not a refusal: the node's counter already reached the fence ({ 0, counter }): try above it. */
  FENCE_TAKEN: 0,
  /** hold_label.lua: a handed-over hold carries its owner and session now. */
  LABELLED: 1,
  HELD: -1,
  NOT_FOUND: -2,
  NOT_OWNER: -3,
  UPGRADE: -4,
  TOO_MANY_READERS: -5,
  TOO_MANY_WAITERS: -6,
  /** A semaphore asked for with another limit than the one it has: { -7, its limit }. */
  LIMIT_MISMATCH: -7,
  /** A semaphore's holder asking again for another number of permits: { -8, the permits it holds }. */
  PERMITS_MISMATCH: -8,
  /** session_open.lua: a session with this reference exists already. */
  SESSION_EXISTS: -9,
  /** The session lapsed, was closed, never existed, or is another API key's. */
  SESSION_NOT_FOUND: -10,
  /** session_bind.lua: the session has MAX_SESSION_HOLDS holds: { -11, its holds, its ttl }. */
  TOO_MANY_HOLDS: -11,
  /** key_sessions.lua: the API key has MAX_SESSIONS_PER_KEY live sessions: { -12, live }. */
  TOO_MANY_SESSIONS: -12,
  /** acquire.lua: free but for a lock-delay (include/delay.lua): { -13, retryAfterMs, wakeInMs, redisUs }. */
  DELAYED: -13,
  // Sessions and watches (src/locks/scripts/session_*.ts, hold_*.ts, watch.ts): what they did.
  /** session_open.lua: the session is open: { 1, ttl }. */
  OPENED: 1,
  /** session_bind.lua: a new entry (BOUND) or one that was there already, a re-acquire (ALREADY_BOUND). */
  BOUND: 1,
  ALREADY_BOUND: 2,
  /** session_close.lua: the session is gone: { 1, its holds… }. */
  CLOSED: 1,
  /** session_show.lua: the session is live: { 1, ttl, remainingMs, owner, its holds… }. */
  LIVE: 1,
  /** hold_state.lua, watch.lua: the token still has its hold: { 1, fence, remainingMs, … }. */
  HOLDING: 1,
  /** key_sessions.lua, sessions_index.lua: the session's entry was added, kept or removed. */
  NOTED: 1,
  /** sessions_index.lua 'census': { 2, live, expired }. */
  COUNTED: 2,
  /** election_stamp.lua: the leader's term has its record (start, revision, value): { 1, term, revision, … }. */
  STAMPED: 1,
  /** election_state.lua: a leader { 1, term, remainingMs, … }, or none { 2, lastTerm, … }. */
  LEADING: 1,
  VACANT: 2,
} as const

/** `local NAME = value` for each code (one statement: a script pays for each line it defines). */
export function luaConstants(codes: Readonly<Record<string, number>>): string {
  const names = Object.keys(codes)
  return `local ${names.join(', ')} = ${names.map((n) => String(codes[n])).join(', ')}`
}

/**
 * The TypeScript side of one script (src/locks/scripts/): its arguments built from named fields, and
 * its reply decoded into a value. A decoder is the only code that reads a reply by position; it throws
 * ScriptReplyError on a shape it does not know.
 */
export interface Script<In, Out> {
  readonly name: ScriptName
  /** ARGV, in the order the script's header lists them (its keys come from LockKeys / SessionKeys). */
  args(input: In): (string | number)[]
  decode(reply: unknown): Out
  /**
   * REDIS_WAIT_REPLICAS: whether this answer reports a change a client is told of, which replicas must
   * confirm (WAIT) before it counts. Absent: the script's answers need no confirmation.
   */
  confirms?(reply: Out): boolean
}

/** A reply whose shape its decoder does not know: a script and its decoder disagree (a bug, not a node fault). */
export class ScriptReplyError extends Error {
  constructor(script: ScriptName, reply: unknown) {
    super(`${script}.lua answered a reply its decoder does not know: ${JSON.stringify(reply)?.slice(0, 200)}`)
    this.name = 'ScriptReplyError'
  }
}
