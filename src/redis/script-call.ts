import { createHash } from 'node:crypto'
import { Command } from 'ioredis'
import type { RedisClient } from './topology.js'

/** One Lua script as a connection runs it: its source, its SHA-1 and how many of its arguments are keys. */
export interface LoadedScript {
  readonly lua: string
  readonly sha: string
  readonly keyCount: number
}

export function loadedScript(lua: string, keyCount: number): LoadedScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex'), keyCount }
}

/**
 * An EVALSHA (or EVAL) whose arguments arrive already flat and as strings. ioredis' own script
 * commands (defineCommand) copy and flatten every call's arguments (Array#flat: about 1.5 µs for a
 * lock script's 18) and wrap the promise twice more; a lock operation makes one such call per node,
 * so this is a measurable share of a request.
 */
class ScriptCommand extends Command {
  constructor(name: 'evalsha' | 'eval', args: string[]) {
    // Replies as strings, as a defined command's are; the arguments are set after the constructor,
    // which would flatten them.
    super(name, [], { replyEncoding: 'utf8' })
    this.args = args
  }
}

/**
 * Run `script` by EVALSHA; a server that does not have it (restarted empty, SCRIPT FLUSH) answers
 * NOSCRIPT without running anything, and the call is sent again as EVAL, which also caches it there.
 */
export function runScript(
  client: RedisClient,
  script: LoadedScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const argv = new Array<string>(2 + keys.length + args.length)
  argv[0] = script.sha
  argv[1] = String(script.keyCount)
  let i = 2
  for (const key of keys) argv[i++] = key
  for (const arg of args) argv[i++] = typeof arg === 'string' ? arg : String(arg)
  const call = new ScriptCommand('evalsha', argv)
  void client.sendCommand(call)
  return call.promise.then(undefined, (err: unknown) => {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
    argv[0] = script.lua
    const again = new ScriptCommand('eval', argv)
    void client.sendCommand(again)
    return again.promise
  })
}
