import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { readFileSync } from 'node:fs'
import { parseDuration } from '../contract/duration.js'
import { keyPrefixRule, lockKeyRule, ownerRule, tokenRule } from '../contract/patterns.js'
import type { HoldMode } from '../contract/wire.js'
import { addElectionCommands, ELECTION_EXIT_CODES, type ElectionCommand } from './elect-args.js'
import { UsageError } from './exit.js'

export const DEFAULT_URL = 'http://127.0.0.1:8080'
export const DEFAULT_GRACE_MS = 3000

export interface Options {
  command: 'run' | 'acquire' | 'renew' | 'release' | 'status' | 'list' | 'check' | ElectionCommand
  url: string
  key: string | undefined
  /** An https:// service's CA and a client certificate (--ca-file, --cert-file, --key-file: their PEM texts) */
  tls: { ca?: string; cert?: string; key?: string } | undefined
  lockKey: string
  /** 'exclusive' → /locks, 'read' | 'write' → /rwlocks, 'permit' → /semaphores */
  mode: HoldMode
  /** status, list: read-write locks (/rwlocks) */
  rw: boolean
  /** status, list: semaphores (/semaphores); true too whenever mode is 'permit' */
  semaphore: boolean
  /** run, acquire of a semaphore (--limit, --permits): its limit and the permits asked for */
  permits: { limit: number; permits: number } | undefined
  ttl: string | undefined
  wait: string | undefined
  waitMs: number
  token: string | undefined
  /** run, acquire: the hold's owner label (--owner) */
  owner: string | undefined
  /** run, acquire: the hold's lock-delay (--lock-delay), passed on as lockDelayMs */
  lockDelay: string | undefined
  graceMs: number
  prefix: string | undefined
  /** list: print at most this many */
  limit: number | undefined
  json: boolean
  /** run, elect: CMD and its arguments */
  cmd: string[]
  /** check: the fence asked about */
  fence?: number
  /** elect: the candidate's label, the value it announces, and whether to campaign again after each term */
  candidate: string | undefined
  value: string | undefined
  requeue: boolean
  /** check: KEY is an election's name and FENCE its term (--election) */
  election?: boolean
}

/** `--help`, `help [COMMAND]` or `--version`: print `text`, exit 0. */
export interface Help {
  command: 'help'
  text: string
}

/** The option values commander hands over, as checked by the parsers below. */
type Values = Partial<
  Record<
    | 'url'
    | 'key'
    | 'caFile'
    | 'certFile'
    | 'keyFile'
    | 'ttl'
    | 'wait'
    | 'token'
    | 'grace'
    | 'prefix'
    | 'owner'
    | 'lockDelay'
    | 'candidate'
    | 'value',
    string
  > &
    Record<'read' | 'write' | 'rw' | 'semaphore' | 'json' | 'requeue' | 'election', true> & { limit: number; permits: number }
>

const EPILOGUE = `
Durations: 1500, 1500ms, 1.5s, 2m, 1h. \`lockctl help COMMAND\` shows a command's options.

run gives CMD LOCK_KEY, LOCK_FENCE (the fencing token: pass it to the resource you protect) and
LOCK_TOKEN (the owner token) in its environment; of a semaphore, also LOCK_PERMITS.

Semaphores (/semaphores/KEY: at most N permits held at once): run and acquire take --limit N and
--permits K (default 1); renew, release, status and list take --semaphore.

Exit codes:
  0      success (run: CMD exited 0)
  1      renew/release: the lock is gone (404 lock_not_found) or not yours (409 not_owner);
         status: the lock is not held; check: the fence is not a live hold's
  64     usage error (bad arguments, or the service answered 400 invalid_request)
  69     the service is unreachable, timed out, or answered 503
  70     run: the lock was lost while CMD was running; CMD was stopped
  75     the lock was not obtained: held by someone else (after --wait), in its lock-delay
         (409 lock_delayed), or too many waiters
  76     the service answered something unexpected
  77     401 unauthorized / 403 forbidden: the API key is missing, wrong, or not allowed this key
  78     a semaphore's --limit differs from the limit it has while others hold or wait
         (409 limit_mismatch), or a holder asked again for other --permits (permits_mismatch)
  126    run: CMD could not be executed;  127: CMD was not found
  128+N  run: CMD died by signal N (or lockctl got signal N before CMD started)
  other  run: CMD's own exit code
${ELECTION_EXIT_CODES}`

const RUN = `Acquire KEY, run CMD while holding it, release it when CMD exits.
CMD gets LOCK_KEY, LOCK_FENCE (pass it to the resource you protect) and LOCK_TOKEN in its environment
(of a semaphore, also LOCK_PERMITS).
The run opens a session (its TTL: --ttl) and binds the lock to it; the session is kept alive in the
background (every third of its validity), and the lock is watched (GET …/watch) so that a force-release
or a lost session stops CMD at once. SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to CMD's process
group (CMD runs in its own; SIGTSTP is ignored).
If the lock is lost (the watch says it is gone, a keepalive or renew answers 404/409, or they keep
failing until the validity runs out), CMD's process group gets SIGTERM, then SIGKILL after --grace, and
lockctl exits 70.
Exits with CMD's exit code, or 128 + the signal number if CMD died by a signal.`

const LIST = `Print one line per held lock, following the service's pagination cursors:
  KEY exclusive fence=F remainingMs=R holdCount=H waiters=W [owner=OWNER]
With --rw (readerHolds: each read hold, whose fence force-releases it):
  KEY write|read writerFence=F|- writerRemainingMs=R|- readers=N writerWaiting=B
    waiters=W readerHolds=FENCE:REMAININGMS,...|- [owners=["OWNER",...]]
With --semaphore (holds: each hold, whose fence force-releases it):
  KEY semaphore limit=N permitsInUse=P holders=H waiters=W holds=FENCE:PERMITS:REMAININGMS,...|-
    [owners=["OWNER",...]]
owner= / owners= (the holds' owner labels, at most 10) only when a hold has one; owner= is the last
field and may contain spaces.
Needs an admin key when the service uses API keys.`

/** A check against one of the service's own rules (src/contract), so a typo fails before any request. */
const matching =
  (rule: { pattern: RegExp; text: string }) =>
  (value: string): string => {
    if (!rule.pattern.test(value)) throw new InvalidArgumentError(rule.text)
    return value
  }

function duration(value: string): string {
  if (parseDuration(value) === undefined) throw new InvalidArgumentError('a duration such as 1500, 1500ms, 1.5s, 2m or 1h')
  return value
}

function fenceArgument(value: string): string {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('a whole number, 1 … 2^53 − 1')
  return value
}

function positive(value: string): number {
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new InvalidArgumentError('a positive whole number')
  return Number(value)
}

const ttl = () => new Option('--ttl <duration>', "lease length (default: the service's, 30s)").argParser(duration)
const wait = () =>
  new Option('--wait <duration>', 'wait in line up to this long when the lock is held (default: 0, try once)').argParser(duration)
const read = () =>
  new Option('--read', 'a read (shared) hold of the read-write lock KEY (/rwlocks) instead of the exclusive lock KEY (/locks)').conflicts(
    'write',
  )
const write = () => new Option('--write', 'a write (exclusive) hold of the read-write lock KEY (/rwlocks)')
const token = (description: string) =>
  new Option('--token <token>', `owner token (${tokenRule.text}); ${description}`).argParser(matching(tokenRule))
const rw = () => new Option('--rw', 'read-write locks (/rwlocks) instead of exclusive ones (/locks)').conflicts('semaphore')
/** renew, release, status, list: a semaphore's. */
const semaphore = (what: string) => new Option('--semaphore', `${what} of the semaphore KEY (/semaphores) instead of the lock KEY`)
/** run, acquire: --limit makes KEY a semaphore. */
const semaphoreLimit = () =>
  new Option('--limit <n>', "a semaphore: KEY is /semaphores/KEY, at most N permits held at once (it must match the semaphore's limit)")
    .argParser(positive)
    .conflicts(['read', 'write'])
const permits = () =>
  new Option('--permits <k>', 'with --limit: the permits this hold takes (default 1, at most the limit)').argParser(positive)

/** lockctl's commands and options; `chosen` hears which command the arguments name. */
function program(out: (text: string) => void, chosen: (command: Command) => void): Command {
  const lockctl = new Command('lockctl')
    .description('lockctl — take locks from lock-service on the command line')
    .option('--url <url>', `the lock service (default: $LOCK_SERVICE_URL, else ${DEFAULT_URL})`)
    .option(
      '--key <secret>',
      'API key, sent as "Authorization: Bearer SECRET" ' +
        '(default: $LOCK_SERVICE_KEY; prefer the variable: command lines are visible to other users)',
    )
    .option(
      '--ca-file <path>',
      "an https:// service: the CA that signed its certificate, PEM (default: $LOCK_SERVICE_CA_FILE; else the system's)",
    )
    .option('--cert-file <path>', 'a client certificate, PEM, for a service that requires one (default: $LOCK_SERVICE_CERT_FILE)')
    .option('--key-file <path>', "the client certificate's private key, PEM (default: $LOCK_SERVICE_KEY_FILE)")
    .version(`lockctl ${version()}`, '--version', 'print the version')
    .addHelpText('after', EPILOGUE)
    .exitOverride()
    .configureOutput({ writeOut: out, writeErr: () => {}, outputError: () => {} })
    .configureHelp({ showGlobalOptions: true, subcommandTerm: (c) => `${c.name()} ${c.usage()}` })
  const command = (name: string, summary: string) =>
    lockctl
      .command(name)
      .summary(summary)
      .description(summary) // the longer ones below replace it
      .action(function (this: Command) {
        chosen(this)
      })
  const withKey = (name: string, summary: string) =>
    command(name, summary).argument('<KEY>', `the lock (${lockKeyRule.text})`, matching(lockKeyRule))

  /** What run and acquire both take: the lease, the wait, and which kind of hold. */
  const acquireOptions = (cmd: Command) =>
    cmd
      .addOption(ttl())
      .addOption(wait())
      .addOption(read())
      .addOption(write())
      .addOption(semaphoreLimit())
      .addOption(permits())
      .addOption(
        new Option('--owner <label>', `who holds it, shown by status, list and a 409 (${ownerRule.text}; not a secret)`).argParser(
          matching(ownerRule),
        ),
      )
      .addOption(
        new Option(
          '--lock-delay <duration>',
          "if the hold ends without lockctl's release (it expired: lockctl was stopped or cut off), nobody gets KEY for this long",
        ).argParser(duration),
      )

  acquireOptions(
    withKey('run', 'acquire KEY, run CMD while holding it, release it when CMD exits')
      .usage('[options] <KEY> -- CMD [ARGS...]')
      .description(RUN)
      .allowExcessArguments(), // CMD before `--`: said below, with the fix
  ).addOption(
    new Option('--grace <duration>', 'how long CMD may take to exit after SIGTERM when the lock is lost (default: 3s)').argParser(duration),
  )
  acquireOptions(
    withKey('acquire', 'acquire KEY and print the grant as one line of JSON').description(
      'Acquire KEY and print the grant as one line of JSON ' +
        '({ key, mode, token, fence, ttlMs, validityMs, expiresAt, holdCount }),\n' +
        'e.g. TOKEN=$(lockctl acquire jobs:x --ttl 5m | jq -r .token).',
    ),
  ).addOption(token('chosen by the service when absent'))
  withKey('renew', 'extend a hold you own; prints the new grant')
    .addOption(token("the grant's").makeOptionMandatory())
    .addOption(ttl())
    .addOption(read())
    .addOption(write())
    .addOption(semaphore('a hold').conflicts(['read', 'write']))
  withKey('release', 'release a hold you own; prints { key, released, holdCount }')
    .addOption(token("the grant's").makeOptionMandatory())
    .addOption(read())
    .addOption(write())
    .addOption(semaphore('a hold').conflicts(['read', 'write']))
  withKey('status', "print the lock's state as JSON (never its token); exit 1 when it is not held")
    .addOption(rw())
    .addOption(semaphore('the state'))
  withKey('check', "print whether FENCE is a live hold's fence of KEY as JSON; exit 0 when it is, 1 when not")
    .argument('<FENCE>', 'the fence to check (a whole number, 1 … 2^53 − 1)', fenceArgument)
    .addOption(rw())
    .addOption(semaphore('a hold'))
    .addOption(
      new Option('--election', "KEY is an election's name and FENCE a term: is it the leader's term now?").conflicts(['rw', 'semaphore']),
    )
  command('list', 'print one line per held lock (an admin key when the service uses API keys)')
    .description(LIST)
    .option('--prefix <prefix>', 'only keys starting with this', matching(keyPrefixRule))
    .option('--limit <n>', 'print at most this many locks', positive)
    .addOption(rw())
    .addOption(semaphore('the held semaphores'))
    .option('--json', 'print each lock as one line of JSON instead')
  addElectionCommands(command, { duration, matching })
  return lockctl
}

export function parse(argv: readonly string[], env: Record<string, string | undefined>): Options | Help {
  // `run`'s CMD is everything after the first `--`, untouched (its options are not ours).
  const dashes = argv.indexOf('--')
  const own = dashes === -1 ? [...argv] : argv.slice(0, dashes)
  const cmd = dashes === -1 ? [] : argv.slice(dashes + 1)

  let text = ''
  let sub: Command | undefined
  try {
    program(
      (s) => (text += s),
      (c) => (sub = c),
    ).parse(own, { from: 'user' })
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err
    if (err.exitCode === 0) return { command: 'help', text }
    if (err.code === 'commander.help') throw new UsageError('missing or unknown command (see lockctl --help)')
    throw new UsageError(err.message.replace(/^error: /, '').replaceAll('\n', ' '))
  }
  if (sub === undefined) throw new UsageError('missing or unknown command (see lockctl --help)')
  const command = sub.name() as Options['command']
  const [lockKey = '', ...extra] = sub.args

  const runs = command === 'run' || command === 'elect'
  const what = command === 'elect' ? 'NAME' : 'KEY'
  if (dashes !== -1 && !runs) throw new UsageError(`${command} does not take a command after --`)
  if (runs && extra.length > 0)
    throw new UsageError(`put the command after --: lockctl ${command} ${lockKey} [options] -- ${extra.join(' ')}`)
  if (runs && cmd.length === 0) throw new UsageError(`${command} needs a command: lockctl ${command} ${what} [options] -- CMD [ARGS...]`)

  const v = sub.optsWithGlobals<Values>()
  const url = v.url ?? (env.LOCK_SERVICE_URL || DEFAULT_URL)
  checkUrl(url)
  const acquires = command === 'run' || command === 'acquire'
  // run, acquire: --limit makes KEY a semaphore (list's --limit is how many to print).
  const semaphoreLimit = acquires ? v.limit : undefined
  if (acquires && v.permits !== undefined && semaphoreLimit === undefined) {
    throw new UsageError("--permits goes with --limit N (the semaphore's limit)")
  }
  if (semaphoreLimit !== undefined && (v.permits ?? 1) > semaphoreLimit) {
    throw new UsageError(`--permits ${v.permits} is more than the limit, ${semaphoreLimit}`)
  }
  const isSemaphore = semaphoreLimit !== undefined || (v.semaphore ?? false)
  return {
    command,
    url,
    key: v.key ?? (env.LOCK_SERVICE_KEY || undefined),
    tls: tlsFiles(url, v, env),
    lockKey,
    mode: v.read ? 'read' : v.write ? 'write' : isSemaphore && command !== 'status' && command !== 'list' ? 'permit' : 'exclusive',
    rw: v.rw ?? false,
    semaphore: isSemaphore,
    permits: semaphoreLimit === undefined ? undefined : { limit: semaphoreLimit, permits: v.permits ?? 1 },
    ttl: v.ttl,
    wait: v.wait,
    waitMs: v.wait === undefined ? 0 : (parseDuration(v.wait) ?? 0),
    token: v.token,
    owner: acquires ? v.owner : undefined,
    lockDelay: acquires ? v.lockDelay : undefined,
    graceMs: v.grace === undefined ? DEFAULT_GRACE_MS : (parseDuration(v.grace) ?? DEFAULT_GRACE_MS),
    prefix: v.prefix,
    limit: acquires ? undefined : v.limit,
    json: v.json ?? false,
    cmd,
    ...(command === 'check' ? { fence: Number(extra[0]), election: v.election ?? false } : {}),
    candidate: v.candidate,
    value: v.value,
    requeue: v.requeue ?? false,
  }
}

/** --ca-file, --cert-file, --key-file (or their variables), read: the client library's `tls` option. */
function tlsFiles(url: string, v: Values, env: Record<string, string | undefined>): Options['tls'] {
  const files = {
    ca: ['--ca-file', v.caFile ?? (env.LOCK_SERVICE_CA_FILE || undefined)],
    cert: ['--cert-file', v.certFile ?? (env.LOCK_SERVICE_CERT_FILE || undefined)],
    key: ['--key-file', v.keyFile ?? (env.LOCK_SERVICE_KEY_FILE || undefined)],
  } as const
  const given = Object.entries(files).filter(([, [, path]]) => path !== undefined)
  if (given.length === 0) return undefined
  if (!url.startsWith('https:')) throw new UsageError(`${given.map(([, [flag]]) => flag).join(', ')}: only for an https:// service URL`)
  if ((files.cert[1] === undefined) !== (files.key[1] === undefined)) throw new UsageError('--cert-file and --key-file go together')
  const tls: Record<string, string> = {}
  for (const [name, [flag, path]] of given) {
    try {
      tls[name] = readFileSync(path as string, 'utf8')
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
    }
  }
  return tls
}

function checkUrl(text: string): void {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`not a URL: ${JSON.stringify(text)} (--url or LOCK_SERVICE_URL)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`the service URL must be http:// or https://, not ${url.protocol}`)
  if (url.search || url.hash) throw new UsageError('the service URL must not have a query or fragment')
}

function version(): string {
  try {
    // src/cli/ and dist/cli/ both sit two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    return typeof pkg.version === 'string' ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}
