import { readFileSync } from 'node:fs'

/**
 * The Lua scripts in src/lua, read once at start. A line `--@include NAME` is replaced by
 * src/lua/include/NAME.lua, so helpers shared by several scripts live in one file, and every script
 * starts with include/settings.lua, its `{{NAME}}` placeholders filled from ScriptSettings, and
 * include/clock.lua (TIME, formatting). Defining an include's functions is part of every call, so a
 * script's fast path comes before the includes it does not need.
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
] as const

/** Every lock script takes the same seven keys of one lock (LockKeys.all), all under one hash tag. */
export const SCRIPT_KEY_COUNT = 7
/** A session's scripts (session_*.lua) take its two keys (SessionKeys.all), under the session's own tag. */
export const SESSION_SCRIPT_KEY_COUNT = 2
export type ScriptName = (typeof scriptNames)[number]

/** How many of a script's arguments are keys. */
export function keyCountOf(name: ScriptName): number {
  if (name === 'key_sessions' || name === 'sessions_index') return 1
  return name.startsWith('session_') ? SESSION_SCRIPT_KEY_COUNT : SCRIPT_KEY_COUNT
}

const luaDir = new URL('../lua/', import.meta.url)

function readLua(relative: string): string {
  return readFileSync(new URL(relative, luaDir), 'utf8')
}

function expandIncludes(source: string): string {
  return source.replace(/^--@include (\w+)$/gm, (_line, name: string) => readLua(`include/${name}.lua`))
}

/** Per-service settings the scripts read as constants (include/settings.lua). */
export interface ScriptSettings {
  FENCE_MEMORY_MS: number
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

const sources = new Map<ScriptName, string>()

export function loadScripts(given: ScriptSettings): ReadonlyMap<ScriptName, string> {
  const settings: ScriptSettings = { WAKE_COUNTS_RECEIVERS: 1, ...given }
  const filled = readLua('include/settings.lua').replace(/\{\{(\w+)\}\}/g, (_m, name: string) => {
    const value = settings[name as keyof ScriptSettings]
    if (value === undefined) throw new Error(`include/settings.lua: no setting ${name}`)
    return String(value)
  })
  const header = `${filled}\n${readLua('include/clock.lua')}`
  return new Map(
    scriptNames.map((name) => {
      if (!sources.has(name)) sources.set(name, expandIncludes(readLua(`${name}.lua`)))
      return [name, `${header}\n${sources.get(name)}`]
    }),
  )
}

/**
 * The codes in the first slot of a script's reply. Positive: it did what was asked (the meaning of 1
 * and 2 depends on the script, hence one table each); negative: why not, the same for every script.
 */
export const Acquired = { GRANTED: 1, REGRANTED: 2 } as const
export const Renewed = { RENEWED: 1 } as const
export const Released = { RELEASED: 1, DECREMENTED: 2 } as const
export const Refused = {
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
} as const
