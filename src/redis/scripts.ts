import { readFileSync } from 'node:fs'

/**
 * The Lua scripts in src/lua, read once at start. A line `--@include NAME` is replaced by
 * src/lua/include/NAME.lua, so helpers shared by several scripts live in one file.
 * ioredis' defineCommand then runs each one by EVALSHA (falling back to EVAL after a SCRIPT FLUSH
 * or a restarted node).
 */
export const scriptNames = ['acquire', 'renew', 'release', 'rollback', 'fence_commit', 'inspect', 'leave', 'touch', 'force_release'] as const

/** Every script takes the same six keys of one lock (LockKeys.all), all under one hash tag. */
export const SCRIPT_KEY_COUNT = 6
export type ScriptName = (typeof scriptNames)[number]

const luaDir = new URL('../lua/', import.meta.url)

function readLua(relative: string): string {
  return readFileSync(new URL(relative, luaDir), 'utf8')
}

function expandIncludes(source: string): string {
  return source.replace(/^--@include (\w+)$/gm, (_line, name: string) => readLua(`include/${name}.lua`))
}

let cache: ReadonlyMap<ScriptName, string> | undefined

export function loadScripts(): ReadonlyMap<ScriptName, string> {
  cache ??= new Map(scriptNames.map((name) => [name, expandIncludes(readLua(`${name}.lua`))]))
  return cache
}

/** Named codes the scripts return in the first slot of their reply. */
export const ScriptCode = {
  GRANTED: 1,
  REGRANTED: 2,
  RENEWED: 1,
  RELEASED: 1,
  DECREMENTED: 2,
  HELD: -1,
  NOT_FOUND: -2,
  NOT_OWNER: -3,
  UPGRADE: -4,
  TOO_MANY_READERS: -5,
  TOO_MANY_WAITERS: -6,
} as const
