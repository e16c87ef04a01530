import { parseArgs } from 'node:util'
import { parseDuration } from '../contract/duration.js'
import { keyPrefixRule, lockKeyRule, tokenRule } from '../contract/patterns.js'
import { UsageError } from './exit.js'

export const DEFAULT_URL = 'http://127.0.0.1:8080'
export const DEFAULT_GRACE_MS = 3000

export const HELP = `lockctl — take locks from lock-service on the command line

Usage:
  lockctl run KEY [--ttl 30s] [--wait 1m] [--read|--write] [--grace 3s] -- CMD [ARGS...]
  lockctl acquire KEY [--ttl 30s] [--wait 1m] [--read|--write] [--token T]
  lockctl renew KEY --token T [--ttl 30s] [--read|--write]
  lockctl release KEY --token T [--read|--write]
  lockctl status KEY [--rw]
  lockctl list [--prefix P] [--limit N] [--rw] [--json]
  lockctl --help | --version

Commands:
  run       Acquire KEY, run CMD while holding it, release it when CMD exits.
            CMD gets LOCK_KEY, LOCK_FENCE (pass it to the resource you protect) and LOCK_TOKEN.
            The lock is renewed in the background (every third of its validity). SIGINT,
            SIGTERM, SIGHUP and SIGQUIT are forwarded to CMD (CMD runs in its own process group,
            and signals go to the whole group; SIGTSTP is ignored). If the lock is lost (a renew answers 404/409, or
            renewals keep failing until the validity runs out) CMD's process group gets SIGTERM,
            then SIGKILL after --grace, and lockctl exits 70.
            Exits with CMD's exit code, or 128 + the signal number if CMD died by a signal.
  acquire   Acquire KEY and print the grant as one line of JSON
            ({ key, mode, token, fence, ttlMs, validityMs, expiresAt, holdCount });
            e.g. TOKEN=$(lockctl acquire jobs:x --ttl 5m | jq -r .token).
  renew     Extend a hold you own; prints the new grant.
  release   Release a hold you own; prints { key, released, holdCount }.
  status    Print the lock's state as JSON (never its token); exit 1 when it is not held.
  list      Print one line per held lock (following the service's pagination cursors):
              KEY exclusive fence=F remainingMs=R holdCount=H waiters=W
              KEY write|read writerFence=F|- writerRemainingMs=R|- readers=N writerWaiting=B waiters=W
                readerHolds=FENCE:REMAININGMS,...|-   (each read hold; force-release one by its fence)
            Needs an admin key when the service uses API keys.

Options:
  --url URL        lock service (default: $LOCK_SERVICE_URL, else ${DEFAULT_URL})
  --key SECRET     API key, sent as "Authorization: Bearer SECRET" (default: $LOCK_SERVICE_KEY;
                   prefer the variable: command lines are visible to other users)
  --ttl DURATION   lease length: 1500, 1500ms, 1.5s, 2m, 1h (default: the service's, 30s)
  --wait DURATION  wait in line up to this long when the lock is held (default 0: try once)
  --read, --write  a read (shared) or write (exclusive) hold of the read-write lock KEY
                   (/rwlocks) instead of the exclusive lock KEY (/locks)
  --rw             status/list: the read-write locks (/rwlocks) instead of /locks
  --token T        owner token (16-128 characters from A-Z a-z 0-9 _ -); acquire: chosen by the
                   service when absent
  --grace DURATION run: how long CMD may take to exit after SIGTERM when the lock is lost (3s)
  --prefix P       list: only keys starting with P
  --limit N        list: print at most N locks
  --json           list: print each lock as one line of JSON instead
  -h, --help       this help

Exit codes:
  0    success (run: CMD exited 0)
  1    renew/release: the lock is gone (404 lock_not_found) or not yours (409 not_owner);
       status: the lock is not held
  64   usage error (bad arguments, or the service answered 400 invalid_request)
  69   the service is unreachable, timed out, or answered 503
  70   run: the lock was lost while CMD was running; CMD was stopped
  75   the lock was not obtained: held by someone else (after --wait), or too many waiters
  76   the service answered something unexpected
  77   401 unauthorized / 403 forbidden: the API key is missing, wrong, or not allowed this key
  126  run: CMD could not be executed;  127: CMD was not found
  128+N  run: CMD died by signal N (or lockctl got signal N before CMD started)
  any other: run: CMD's own exit code
`

export type Command = 'run' | 'acquire' | 'renew' | 'release' | 'status' | 'list' | 'help' | 'version'

export interface Options {
  command: Command
  url: string
  key: string | undefined
  lockKey: string
  /** 'exclusive' → /locks, 'read' | 'write' → /rwlocks */
  mode: 'exclusive' | 'read' | 'write'
  rw: boolean
  ttl: string | undefined
  wait: string | undefined
  waitMs: number
  token: string | undefined
  graceMs: number
  prefix: string | undefined
  limit: number | undefined
  json: boolean
  /** run: CMD and its arguments */
  cmd: string[]
}

const optionSpec = {
  url: { type: 'string' },
  key: { type: 'string' },
  ttl: { type: 'string' },
  wait: { type: 'string' },
  token: { type: 'string' },
  grace: { type: 'string' },
  prefix: { type: 'string' },
  limit: { type: 'string' },
  read: { type: 'boolean' },
  write: { type: 'boolean' },
  rw: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const

type OptionName = keyof typeof optionSpec

const common: readonly OptionName[] = ['url', 'key', 'help']
const allowed: Record<Exclude<Command, 'help' | 'version'>, readonly OptionName[]> = {
  run: ['ttl', 'wait', 'read', 'write', 'grace'],
  acquire: ['ttl', 'wait', 'read', 'write', 'token'],
  renew: ['ttl', 'read', 'write', 'token'],
  release: ['read', 'write', 'token'],
  status: ['rw'],
  list: ['prefix', 'limit', 'rw', 'json'],
}

// The service's own rules (src/contract), checked here so a typo fails before any request.
const KEY = lockKeyRule.pattern
const PREFIX = keyPrefixRule.pattern
const TOKEN = tokenRule.pattern

/**
 * `--token -x…` → `--token=-x…`: an option that takes a value takes the next argument, whatever it
 * starts with (as getopt does). Tokens, keys and prefixes may start with '-'; parseArgs alone would
 * call that ambiguous.
 */
function withValuesAttached(args: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const name = arg.startsWith('--') ? arg.slice(2) : undefined
    const next = args[i + 1]
    if (name !== undefined && optionSpec[name as OptionName]?.type === 'string' && next?.startsWith('-')) {
      out.push(`${arg}=${next}`)
      i++
    } else {
      out.push(arg)
    }
  }
  return out
}

export function parse(argv: readonly string[], env: Record<string, string | undefined>): Options {
  // `run`'s CMD is everything after the first `--`, untouched (its options are not ours).
  const dashes = argv.indexOf('--')
  const own = dashes === -1 ? [...argv] : argv.slice(0, dashes)
  const cmd = dashes === -1 ? [] : argv.slice(dashes + 1)

  let parsed: ReturnType<typeof parseArgs<{ options: typeof optionSpec; allowPositionals: true; strict: true }>>
  try {
    parsed = parseArgs({ args: withValuesAttached(own), options: optionSpec, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError(firstLine((err as Error).message))
  }
  const { values, positionals } = parsed
  const [first, ...rest] = positionals

  const base = {
    url: values.url ?? (env.LOCK_SERVICE_URL || DEFAULT_URL),
    key: values.key ?? (env.LOCK_SERVICE_KEY || undefined),
    lockKey: '',
    mode: 'exclusive' as const,
    rw: false,
    ttl: undefined,
    wait: undefined,
    waitMs: 0,
    token: undefined,
    graceMs: DEFAULT_GRACE_MS,
    prefix: undefined,
    limit: undefined,
    json: false,
    cmd: [],
  }
  if (values.version) return { ...base, command: 'version' }
  if (values.help || first === 'help' || first === undefined) {
    if (first === undefined && !values.help) throw new UsageError('missing command (see lockctl --help)')
    return { ...base, command: 'help' }
  }
  if (!(first in allowed)) throw new UsageError(`unknown command "${first}" (see lockctl --help)`)
  const command = first as keyof typeof allowed

  const permitted = new Set([...common, ...allowed[command]])
  for (const name of Object.keys(values) as OptionName[]) {
    if (!permitted.has(name)) throw new UsageError(`${command} does not take --${name}`)
  }
  if (dashes !== -1 && command !== 'run') throw new UsageError(`${command} does not take a command after --`)

  let url: URL
  try {
    url = new URL(base.url)
  } catch {
    throw new UsageError(`not a URL: ${JSON.stringify(base.url)} (--url or LOCK_SERVICE_URL)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the service URL must be http:// or https://, not ${url.protocol}`)
  if (url.search || url.hash) throw new UsageError('the service URL must not have a query or fragment')

  if (values.read && values.write) throw new UsageError('--read and --write exclude each other')
  const mode = values.read ? 'read' : values.write ? 'write' : 'exclusive'

  let lockKey = ''
  if (command === 'list') {
    if (rest.length > 0) throw new UsageError(`list takes no arguments (unexpected "${rest[0]}"); use --prefix`)
  } else {
    const [k, ...extra] = rest
    if (k === undefined) throw new UsageError(`${command} needs a lock KEY`)
    if (!KEY.test(k)) throw new UsageError(`bad lock key ${JSON.stringify(k)}: ${lockKeyRule.text}`)
    if (extra.length > 0) {
      throw new UsageError(command === 'run' ? `put the command after --: lockctl run ${k} [options] -- ${extra.join(' ')}` : `unexpected argument "${extra[0]}"`)
    }
    lockKey = k
  }

  if (command === 'run' && cmd.length === 0) throw new UsageError('run needs a command: lockctl run KEY [options] -- CMD [ARGS...]')
  if ((command === 'renew' || command === 'release') && values.token === undefined) throw new UsageError(`${command} needs --token`)
  if (values.token !== undefined && !TOKEN.test(values.token)) throw new UsageError(`bad --token: ${tokenRule.text}`)

  const ttl = values.ttl
  if (ttl !== undefined && parseDuration(ttl) === undefined) throw new UsageError(durationMessage('--ttl', ttl))
  const wait = values.wait
  const waitMs = wait === undefined ? 0 : parseDuration(wait)
  if (waitMs === undefined) throw new UsageError(durationMessage('--wait', wait ?? ''))
  const graceMs = values.grace === undefined ? DEFAULT_GRACE_MS : parseDuration(values.grace)
  if (graceMs === undefined) throw new UsageError(durationMessage('--grace', values.grace ?? ''))

  if (values.prefix !== undefined && !PREFIX.test(values.prefix)) throw new UsageError(`bad --prefix: ${keyPrefixRule.text}`)
  let limit: number | undefined
  if (values.limit !== undefined) {
    limit = /^[1-9]\d{0,8}$/.test(values.limit) ? Number(values.limit) : NaN
    if (Number.isNaN(limit)) throw new UsageError(`bad --limit ${JSON.stringify(values.limit)}: a positive whole number`)
  }

  return {
    ...base,
    command,
    url: base.url,
    lockKey,
    mode,
    rw: values.rw ?? false,
    ttl,
    wait,
    waitMs,
    token: values.token,
    graceMs,
    prefix: values.prefix,
    limit,
    json: values.json ?? false,
    cmd,
  }
}

function durationMessage(option: string, text: string): string {
  return `bad ${option} ${JSON.stringify(text)}: a duration such as 1500, 1500ms, 1.5s, 2m or 1h`
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text
}
