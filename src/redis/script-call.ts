import { createHash } from 'node:crypto'
import { Command } from 'ioredis'
import type { RedisClient } from './topology.js'

/** One Lua script as a connection runs it: its source, its SHA-1 and how many of its arguments are keys. */
export interface LoadedScript {
  readonly lua: string
  readonly sha: string
  readonly keyCount: number
  /** The connections (sockets) it was sent to in full, by EVAL: they have it cached. */
  readonly sentTo: WeakSet<object>
}

export function loadedScript(lua: string, keyCount: number): LoadedScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex'), keyCount, sentTo: new WeakSet() }
}

/**
 * One call's arguments, flat and as strings: the script's SHA-1, the key count, the keys, then the
 * rest (EVALSHA's). The nodes of a quorum are each sent the same call: its arguments and its EVALSHA
 * text are made once, by the first node (`evalshaText`), and shared.
 */
export interface CallArgs {
  readonly argv: readonly string[]
  evalshaText: string | undefined
}

export function callArgs(script: LoadedScript, keys: readonly string[], args: readonly (string | number)[]): CallArgs {
  const argv = new Array<string>(2 + keys.length + args.length)
  argv[0] = script.sha
  argv[1] = String(script.keyCount)
  let i = 2
  for (const key of keys) argv[i++] = key
  for (const arg of args) argv[i++] = typeof arg === 'string' ? arg : String(arg)
  return { argv, evalshaText: undefined }
}

/**
 * An EVALSHA whose arguments arrive already flat and as strings. ioredis' own script commands
 * (defineCommand) copy and flatten every call's arguments (Array#flat) and wrap the promise twice
 * more; a lock operation makes one such call per node, so that is a measurable share of a request
 * (the figures: docs/ARCHITECTURE.md). It overrides `toWritable`, a member ioredis does not document:
 * pinned with ioredis' version and guarded by test/internals/private-apis.test.ts. As ioredis does, the first call of a script on each
 * connection is sent as EVAL with the script itself: a server that lacks it (started empty) caches
 * it then, and the commands sent after it on that connection run after it, in order.
 */
class ScriptCommand extends Command {
  /** The connection it was written to. */
  sentOn: object | undefined

  constructor(
    private readonly script: LoadedScript,
    private readonly call: CallArgs,
  ) {
    // Replies as strings, as a defined command's are; the arguments are set after the constructor,
    // which would flatten them (ioredis reads them to find a Redis Cluster slot).
    super('evalsha', [], { replyEncoding: 'utf8' })
    this.args = call.argv as string[]
  }

  override toWritable(socket: object): string | Buffer {
    this.sentOn = socket
    if (this.script.sentTo.has(socket)) {
      this.name = 'evalsha'
      this.args = this.call.argv as string[]
      return (this.call.evalshaText ??= resp(this.name, this.call.argv))
    }
    this.script.sentTo.add(socket)
    this.name = 'eval'
    // A copy: the call's arguments are shared with the other nodes.
    this.args = [this.script.lua, ...this.call.argv.slice(1)]
    return resp(this.name, this.args as string[])
  }
}

/**
 * RESP length headers (`$12\r\n`) of the shorter arguments, made once: a number turned into text
 * costs more than the rest of its argument's share.
 */
const LENGTH_HEADERS = Array.from({ length: 256 }, (_, n) => `$${n}\r\n`)

function lengthHeader(n: number): string {
  return n < LENGTH_HEADERS.length ? (LENGTH_HEADERS[n] as string) : `$${n}\r\n`
}

/**
 * A command in RESP, the way ioredis writes one but with one byte count for the whole command instead
 * of one per argument (a lock script has 18): a string's length in UTF-16 code units
 * is its length in bytes when every character is ASCII, which one count of the whole tells.
 */
export function resp(name: string, args: readonly string[]): string {
  let command = `*${args.length + 1}\r\n$${name.length}\r\n${name}\r\n`
  for (const arg of args) command += lengthHeader(arg.length) + arg + '\r\n'
  if (Buffer.byteLength(command) === command.length) return command
  // Some argument is not ASCII (a script's source, an owner label): count each one's bytes.
  command = `*${args.length + 1}\r\n$${Buffer.byteLength(name)}\r\n${name}\r\n`
  for (const arg of args) command += lengthHeader(Buffer.byteLength(arg)) + arg + '\r\n'
  return command
}

/**
 * How a script's command goes out, returning the promise of its reply: alone by default; with
 * REDIS_WAIT_REPLICAS followed by a WAIT on the same connection (src/redis/confirmed-writes.ts).
 */
export type ScriptSender = (client: RedisClient, call: Command) => Promise<unknown>

const alone: ScriptSender = (client, call) => {
  void client.sendCommand(call)
  return call.promise
}

/**
 * Run `script` with `args` (made once for every node of a quorum: CallArgs). A connection whose
 * server lost it since (SCRIPT FLUSH) answers NOSCRIPT without running anything: the call is sent
 * once more, in full.
 */
export function runScript(client: RedisClient, script: LoadedScript, args: CallArgs, send: ScriptSender = alone): Promise<unknown> {
  const call = new ScriptCommand(script, args)
  return send(client, call).then(undefined, (err: unknown) => {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
    if (call.sentOn) script.sentTo.delete(call.sentOn)
    return send(client, new ScriptCommand(script, args))
  })
}

/**
 * The same call through ioredis' public commands (EVALSHA, then EVAL after NOSCRIPT), which its
 * `enableAutoPipelining` batches: only for the bench's comparison with ours (src/redis/coalesce.ts).
 */
export function runScriptPublicly(client: RedisClient, script: LoadedScript, args: CallArgs): Promise<unknown> {
  const keysAndArgs = args.argv.slice(2)
  return client.evalsha(script.sha, script.keyCount, ...keysAndArgs).catch((err: unknown) => {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
    return client.eval(script.lua, script.keyCount, ...keysAndArgs)
  })
}
