import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { keyPrefixRule, redisKeyPrefixRule } from './contract/patterns.js'
import { wholeNumber } from './contract/whole-number.js'
import { keyMatchesCert, parseSubject, readPem, type PemKind, type TlsFiles } from './tls-files.js'

/**
 * Service configuration: parsed once from the environment by zod, then frozen.
 * `buildApp` takes a Config and never reads the environment itself.
 */

const integer = (name: string, def: number, min: number, max: number) =>
  wholeNumber(name, min, max)
    .optional()
    .transform((v) => v ?? def)

const redisUrl = z
  .string()
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s)
      return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== ''
    } catch {
      return false
    }
  }, 'each URL must look like redis://[:password@]host:port[/db] or rediss://…')

/** A sentinel: host:port, or redis://[:password@]host:port / rediss://… (TLS to sentinels and data nodes). */
const sentinelAddress = z.string().transform((s, ctx) => {
  const url = /^rediss?:\/\//.test(s) ? s : `redis://${s}`
  try {
    const u = new URL(url)
    const port = Number(u.port || 26379)
    if (u.hostname === '' || u.pathname.length > 1 || !(port > 0 && port < 65536)) throw new Error('bad')
    return {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port,
      tls: u.protocol === 'rediss:',
      password: u.password === '' ? undefined : decodeURIComponent(u.password),
    }
  } catch {
    ctx.addIssue({ code: 'custom', message: 'each sentinel must look like host:port, redis://[:password@]host:port or rediss://…' })
    return z.NEVER
  }
})

/** One schema per variable, so each bad variable gets its own line whatever the others hold. */
export const envSchema = z.object({
  PORT: integer('PORT', 8080, 0, 65535),
  HOST: z.string().trim().min(1, 'HOST must not be blank').default('0.0.0.0'),
  // A second, plain-HTTP port for /healthz, /readyz and /metrics only (src/http/probe-listener.ts).
  PROBE_PORT: wholeNumber('PROBE_PORT', 0, 65535).optional(),
  REDIS_URLS: z
    .string()
    .optional()
    .transform((s) =>
      (s ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== ''),
    )
    .pipe(z.array(redisUrl).max(32, 'at most 32 Redis URLs')),
  REDIS_URL: redisUrl.optional(),
  REDIS_MODE: z
    .enum(['standalone', 'cluster', 'sentinel'], { error: 'REDIS_MODE must be standalone, cluster or sentinel' })
    .default('standalone'),
  REDIS_SENTINELS: z
    .string()
    .optional()
    .transform((s) =>
      (s ?? '')
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    )
    .pipe(z.array(sentinelAddress).max(32, 'at most 32 sentinels')),
  REDIS_SENTINEL_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'REDIS_SENTINEL_NAME must be 1–100 of A-Z a-z 0-9 . _ -')
    .optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  REDIS_WAIT_REPLICAS: integer('REDIS_WAIT_REPLICAS', 0, 0, 16),
  KEY_PREFIX: z.string().regex(redisKeyPrefixRule.pattern, `KEY_PREFIX: ${redisKeyPrefixRule.text}`).default('lock-service:'),
  DEFAULT_TTL_MS: integer('DEFAULT_TTL_MS', 30_000, 100, 86_400_000),
  MAX_TTL_MS: integer('MAX_TTL_MS', 3_600_000, 100, 86_400_000),
  MAX_WAIT_MS: integer('MAX_WAIT_MS', 60_000, 0, 3_600_000),
  MAX_WATCH_MS: integer('MAX_WATCH_MS', 600_000, 1_000, 3_600_000),
  MAX_LOCK_DELAY_MS: integer('MAX_LOCK_DELAY_MS', 60_000, 0, 3_600_000),
  MAX_WAITERS: integer('MAX_WAITERS', 10_000, 1, 1_000_000),
  MAX_READERS: integer('MAX_READERS', 1_000, 1, 100_000),
  MAX_SEMAPHORE_LIMIT: integer('MAX_SEMAPHORE_LIMIT', 10_000, 1, 1_000_000),
  MAX_SESSION_HOLDS: integer('MAX_SESSION_HOLDS', 1_000, 1, 100_000),
  MAX_SESSIONS_PER_KEY: integer('MAX_SESSIONS_PER_KEY', 10_000, 1, 10_000_000),
  NODE_TIMEOUT_MS: integer('NODE_TIMEOUT_MS', 500, 10, 60_000),
  BODY_TIMEOUT_MS: integer('BODY_TIMEOUT_MS', 10_000, 100, 600_000),
  // How long a fence counter outlives its last grant; then Redis TIME is the floor (docs/configuration.md says why an hour).
  FENCE_RETENTION_MS: integer('FENCE_RETENTION_MS', 3_600_000, 1_000, 30 * 86_400_000),
  DRIFT_FACTOR: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'DRIFT_FACTOR must be a number')
    .transform(Number)
    .pipe(z.number().max(0.5, 'DRIFT_FACTOR must be at most 0.5'))
    .optional()
    .transform((v) => v ?? 0.01),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AUTH_FILE: z.string().trim().min(1).optional(),
  PROTECT_METRICS: z.enum(['true', 'false'], { error: 'PROTECT_METRICS must be true or false' }).default('false'),
  // Abuse limits (src/http/limits.ts): per API key, or per client address while the service runs open.
  RATE_LIMIT_PER_SECOND: integer('RATE_LIMIT_PER_SECOND', 0, 0, 1_000_000),
  RATE_LIMIT_BURST: wholeNumber('RATE_LIMIT_BURST', 1, 10_000_000).optional(),
  MAX_STREAMS_PER_KEY: integer('MAX_STREAMS_PER_KEY', 1_000, 1, 1_000_000),
  AUTH_FAILURE_DELAY_MS: integer('AUTH_FAILURE_DELAY_MS', 100, 0, 10_000),
  // TLS to Redis (rediss:// URLs): the CA that signed the Redis servers' certificates, and a client certificate.
  REDIS_TLS_CA_FILE: z.string().trim().min(1).optional(),
  REDIS_TLS_CERT_FILE: z.string().trim().min(1).optional(),
  REDIS_TLS_KEY_FILE: z.string().trim().min(1).optional(),
  // HTTPS for the service itself; with TLS_CLIENT_CA_FILE every client must present a certificate it signed.
  TLS_CERT_FILE: z.string().trim().min(1).optional(),
  TLS_KEY_FILE: z.string().trim().min(1).optional(),
  TLS_CLIENT_CA_FILE: z.string().trim().min(1).optional(),
})

/** A key's own request rate (AUTH_FILE): perSecond 0 exempts it; burst defaults to one second's worth. */
export const rateLimitSchema = z.strictObject({
  perSecond: z.number().int().min(0).max(1_000_000),
  burst: z.number().int().min(1).max(10_000_000).optional(),
})

/** One API key of AUTH_FILE: the secret itself is never stored, only its SHA-256. */
export const apiKeySchema = z.strictObject({
  name: z.string().min(1).max(100),
  secretSha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'secretSha256 must be the hex SHA-256 of the secret (64 hex digits)')
    .transform((h) => h.toLowerCase()),
  prefixes: z.array(z.string().regex(keyPrefixRule.pattern, `prefixes: ${keyPrefixRule.text}`)).default([]),
  admin: z.boolean().default(false),
  /** Reads only (inspect, fence checks, watches): every POST, PUT and DELETE is 403. */
  readOnly: z.boolean().default(false),
  /** With TLS_CLIENT_CA_FILE: the secret counts only on a connection whose client certificate has this subject. */
  certSubject: z
    .string()
    .max(1000)
    .refine((s) => parseSubject(s) !== undefined, 'certSubject must look like "CN=billing" or "CN=billing, O=Acme"')
    .optional(),
  /** This key's request rate, instead of RATE_LIMIT_PER_SECOND / RATE_LIMIT_BURST. */
  rateLimit: rateLimitSchema.optional(),
})

export const authFileSchema = z.strictObject({
  keys: z
    .array(apiKeySchema)
    .min(1, 'list at least one key')
    .refine((keys) => new Set(keys.map((k) => k.name)).size === keys.length, 'key names must be unique')
    .refine((keys) => new Set(keys.map((k) => k.secretSha256)).size === keys.length, 'two keys share a secret'),
})

/** `readOnly` may be left out by code that builds a Config itself (tests, the bench): false. */
export type ApiKey = Readonly<
  Omit<z.output<typeof apiKeySchema>, 'prefixes' | 'readOnly'> & { prefixes: readonly string[]; readOnly?: boolean }
>

function readAuthFile(path: string): { keys: readonly ApiKey[] } | string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    return `cannot read ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return `${JSON.stringify(path)} is not valid JSON`
  }
  const parsed = authFileSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return `${JSON.stringify(path)}: ${issue?.path.join('.') || 'file'}: ${issue?.message ?? 'invalid'}`
  }
  return Object.freeze({
    keys: Object.freeze(parsed.data.keys.map((k) => Object.freeze({ ...k, prefixes: Object.freeze([...k.prefixes]) }))),
  })
}

type Env = z.output<typeof envSchema>

/** Rules across variables, checked only between variables that are each valid. */
function crossChecks(env: Partial<Env>): [keyof Env, string][] {
  const problems: [keyof Env, string][] = []
  if (env.PROBE_PORT !== undefined && env.PORT !== undefined && env.PROBE_PORT !== 0 && env.PROBE_PORT === env.PORT) {
    problems.push(['PROBE_PORT', `must differ from PORT (${env.PORT}): the probes get a port of their own`])
  }
  if (env.DEFAULT_TTL_MS !== undefined && env.MAX_TTL_MS !== undefined && env.DEFAULT_TTL_MS > env.MAX_TTL_MS) {
    problems.push(['DEFAULT_TTL_MS', `${env.DEFAULT_TTL_MS} must not exceed MAX_TTL_MS (${env.MAX_TTL_MS})`])
  }
  if (env.RATE_LIMIT_BURST !== undefined && env.RATE_LIMIT_PER_SECOND === 0) {
    problems.push([
      'RATE_LIMIT_BURST',
      "is only read with RATE_LIMIT_PER_SECOND above 0 (a key's own burst goes in its rateLimit in AUTH_FILE)",
    ])
  }
  if (env.REDIS_URLS?.length && env.REDIS_URL !== undefined && !env.REDIS_URLS.includes(env.REDIS_URL)) {
    problems.push(['REDIS_URL', 'an alias of REDIS_URLS: set one of them, not two different values'])
  }
  return [...problems, ...modeChecks(env), ...tlsChecks(env)]
}

/** The TLS file variables come in pairs, and the Redis ones are read only for rediss:// links. */
function tlsChecks(env: Partial<Env>): [keyof Env, string][] {
  const problems: [keyof Env, string][] = []
  const pair = (cert: 'REDIS_TLS_CERT_FILE' | 'TLS_CERT_FILE', key: 'REDIS_TLS_KEY_FILE' | 'TLS_KEY_FILE') => {
    if (env[cert] !== undefined && env[key] === undefined) problems.push([key, `is needed with ${cert}: the certificate's private key`])
    if (env[key] !== undefined && env[cert] === undefined) problems.push([cert, `is needed with ${key}: the key's certificate`])
  }
  pair('REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE')
  pair('TLS_CERT_FILE', 'TLS_KEY_FILE')
  if (env.TLS_CLIENT_CA_FILE !== undefined && env.TLS_CERT_FILE === undefined) {
    problems.push(['TLS_CLIENT_CA_FILE', 'client certificates need HTTPS: set TLS_CERT_FILE and TLS_KEY_FILE too'])
  }
  const redisTls =
    [env.REDIS_URL, ...(env.REDIS_URLS ?? [])].some((u) => u?.startsWith('rediss:')) || env.REDIS_SENTINELS?.some((s) => s.tls)
  if (!redisTls) {
    for (const name of ['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const) {
      if (env[name] !== undefined) problems.push([name, 'is only read for TLS links to Redis: no Redis URL or sentinel uses rediss://'])
    }
  }
  return problems
}

/** The PEM files the TLS variables name, read and checked (each problem under its variable's name). */
function readTlsFiles(env: Partial<Env>, problems: Map<string, string>): Pick<Config, 'redisTls' | 'https'> {
  const read = (name: keyof Env, kind: PemKind): string | undefined => {
    const path = env[name]
    if (typeof path !== 'string' || problems.has(name)) return undefined
    const result = readPem(path, kind)
    if ('pem' in result) return result.pem
    problems.set(name, `${name}: ${result.problem}`)
    return undefined
  }
  const matched = (certName: keyof Env, cert: string | undefined, key: string | undefined) => {
    if (cert !== undefined && key !== undefined && !keyMatchesCert(cert, key)) {
      problems.set(certName, `${certName}: the key file holds the private key of another certificate`)
    }
  }
  const redis = {
    ca: read('REDIS_TLS_CA_FILE', 'CA bundle'),
    cert: read('REDIS_TLS_CERT_FILE', 'certificate'),
    key: read('REDIS_TLS_KEY_FILE', 'private key'),
  }
  matched('REDIS_TLS_CERT_FILE', redis.cert, redis.key)
  const https = {
    cert: read('TLS_CERT_FILE', 'certificate'),
    key: read('TLS_KEY_FILE', 'private key'),
    clientCa: read('TLS_CLIENT_CA_FILE', 'CA bundle'),
  }
  matched('TLS_CERT_FILE', https.cert, https.key)
  const defined = <T extends object>(o: T) => Object.freeze(Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)))
  return {
    redisTls: Object.values(redis).some((v) => v !== undefined) ? (defined(redis) as TlsFiles) : null,
    https: https.cert !== undefined && https.key !== undefined ? (defined(https) as HttpsFiles) : null,
  }
}

/** REDIS_MODE and the variables each mode needs or forbids. */
function modeChecks(env: Partial<Env>): [keyof Env, string][] {
  const problems: [keyof Env, string][] = []
  const mode = env.REDIS_MODE
  const urls = env.REDIS_URLS ?? []
  const sentinelVars = (['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD'] as const).filter((name) =>
    name === 'REDIS_SENTINELS' ? (env.REDIS_SENTINELS?.length ?? 0) > 0 : env[name] !== undefined,
  )
  if (mode === 'standalone') {
    const n = urls.length
    if (n > 7) problems.push(['REDIS_URLS', `at most 7 Redis nodes in standalone mode (got ${n}); for more, use REDIS_MODE=cluster`])
    else if ([2, 4, 6].includes(n)) {
      problems.push(['REDIS_URLS', `${n} nodes give no more fault tolerance than ${n - 1}; use 1, 3, 5 or 7 independent Redis masters`])
    }
    for (const name of sentinelVars) problems.push([name, 'is only read with REDIS_MODE=sentinel (REDIS_MODE is standalone)'])
    if (env.REDIS_PASSWORD !== undefined) {
      problems.push(['REDIS_PASSWORD', 'is only read with REDIS_MODE=sentinel: in standalone mode put the password in REDIS_URLS'])
    }
  }
  if (mode === 'cluster') {
    if (urls.length === 0 && env.REDIS_URL === undefined) {
      problems.push(['REDIS_URLS', 'REDIS_MODE=cluster needs REDIS_URLS: one or more nodes of the cluster (seeds)'])
    }
    const passwords = new Set([...urls, ...(env.REDIS_URL ? [env.REDIS_URL] : [])].map((u) => new URL(u).password))
    if (passwords.size > 1)
      problems.push(['REDIS_URLS', 'the nodes of one cluster share one password: give the same one in every seed URL'])
    const schemes = new Set([...urls, ...(env.REDIS_URL ? [env.REDIS_URL] : [])].map((u) => new URL(u).protocol))
    if (schemes.size > 1) problems.push(['REDIS_URLS', 'mixes redis:// and rediss://: the nodes of one cluster all use TLS or none does'])
    for (const name of sentinelVars) problems.push([name, 'is only read with REDIS_MODE=sentinel (REDIS_MODE is cluster)'])
    if (env.REDIS_PASSWORD !== undefined) {
      problems.push(['REDIS_PASSWORD', 'is only read with REDIS_MODE=sentinel: in cluster mode put the password in REDIS_URLS'])
    }
  }
  if (mode === 'sentinel') {
    if (urls.length > 0 || env.REDIS_URL !== undefined) {
      problems.push([
        urls.length > 0 ? 'REDIS_URLS' : 'REDIS_URL',
        'must not be set with REDIS_MODE=sentinel: the sentinels name the primary (give REDIS_SENTINELS and REDIS_SENTINEL_NAME)',
      ])
    }
    if ((env.REDIS_SENTINELS?.length ?? 0) === 0) {
      problems.push(['REDIS_SENTINELS', 'REDIS_MODE=sentinel needs REDIS_SENTINELS: a comma list of host:port (26379 by default)'])
    }
    if (env.REDIS_SENTINEL_NAME === undefined) {
      problems.push([
        'REDIS_SENTINEL_NAME',
        "REDIS_MODE=sentinel needs REDIS_SENTINEL_NAME: the primary's name in the sentinels' configuration",
      ])
    }
    if (new Set(env.REDIS_SENTINELS?.map((s) => s.tls)).size > 1) {
      problems.push(['REDIS_SENTINELS', 'mixes redis:// and rediss://: use TLS for every sentinel or for none'])
    }
  }
  return problems
}

/** Every environment variable the service reads (docker-compose.yml is checked against it). */
export const configEnvNames: readonly string[] = Object.freeze(Object.keys(envSchema.shape))

export type RedisMode = 'standalone' | 'cluster' | 'sentinel'

export interface SentinelConfig {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[]
  readonly name: string
  /** AUTH for the primary and its replicas (REDIS_PASSWORD). */
  readonly password: string | undefined
  /** AUTH for the sentinels (REDIS_SENTINEL_PASSWORD, or the password in the first sentinel URL). */
  readonly sentinelPassword: string | undefined
  /** TLS to sentinels and data nodes (rediss:// sentinels). */
  readonly tls: boolean
}

/** The service's own certificate and key (PEM), and the CA its clients' certificates must come from. */
export interface HttpsFiles {
  readonly cert: string
  readonly key: string
  readonly clientCa?: string
}

export interface Config {
  readonly port: number
  readonly host: string
  /** PROBE_PORT: plain HTTP for the probes and /metrics beside PORT; null: none. */
  readonly probePort: number | null
  /** standalone: 1 URL = single, 3/5/7 = quorum; cluster: seed nodes of one Redis Cluster; sentinel: unused */
  readonly redisUrls: readonly string[]
  readonly redisMode: RedisMode
  /** REDIS_MODE=sentinel only */
  readonly sentinel: SentinelConfig | null
  /** REDIS_WAIT_REPLICAS: grants, renewals and hand-offs are answered once WAIT confirms them on this many replicas. */
  readonly waitReplicas: number
  readonly keyPrefix: string
  readonly defaultTtlMs: number
  readonly maxTtlMs: number
  readonly maxWaitMs: number
  /** Longest lock-delay (lockDelayMs) an acquire or a session may ask for. */
  readonly maxLockDelayMs: number
  /** The longest a watch may wait (a cheap long poll or stream: longer than an acquire's wait in line). */
  readonly maxWatchMs: number
  readonly maxWaiters: number
  readonly maxReaders: number
  /** The largest limit a semaphore may have (its holds are bounded by it, as a lock's by maxReaders). */
  readonly maxSemaphoreLimit: number
  /** The most holds one session may have bound to it. */
  readonly maxSessionHolds: number
  /** With API keys: the most live sessions one API key may have open at once. */
  readonly maxSessionsPerKey: number
  readonly nodeTimeoutMs: number
  /** How long a request's body may take to arrive after its headers (then 408). */
  readonly bodyTimeoutMs: number
  readonly driftFactor: number
  /** How long a key's fence counter outlives its last grant (then Redis TIME is the floor); half of it bounds the hint's lead. */
  readonly fenceRetentionMs: number
  readonly logLevel: string
  /** API keys from AUTH_FILE; null: the service is open (a warning says so at start). */
  readonly auth: { readonly keys: readonly ApiKey[] } | null
  /** Whether /metrics needs an API key too. */
  readonly protectMetrics: boolean
  /** TLS to Redis (REDIS_TLS_*, PEM): a CA and a client certificate for rediss:// links; null: the system's CAs, no certificate. */
  readonly redisTls: TlsFiles | null
  /** HTTPS (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CLIENT_CA_FILE); null: plain HTTP. */
  readonly https: HttpsFiles | null
  /** Requests per second each API key (or client address, when open) may make on this replica; 0: no limit. */
  readonly rateLimitPerSecond: number
  /** How many requests a key may make at once after being idle (the token bucket's size); null: one second's worth. */
  readonly rateLimitBurst: number | null
  /** The most watches and observes (long polls and event streams) one API key (or address) may have open on this replica. */
  readonly maxStreamsPerKey: number
  /** A refused API key (401) is answered this long after its request arrived, whatever was wrong with it. */
  readonly authFailureDelayMs: number
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** Parse the environment; throws ConfigError listing one line per bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems = new Map<string, string>()
  const valid: Partial<Record<keyof Env, unknown>> = {}
  for (const name of Object.keys(envSchema.shape) as (keyof Env)[]) {
    const raw = env[name] === '' ? undefined : env[name]
    const parsed = envSchema.shape[name].safeParse(raw)
    if (parsed.success) valid[name] = parsed.data
    else problems.set(name, `${name}: ${parsed.error.issues[0]?.message ?? 'invalid'} (got ${shown(name, raw)})`)
  }
  for (const [name, message] of crossChecks(valid as Partial<Env>)) {
    if (!problems.has(name)) problems.set(name, `${name}: ${message}`)
  }
  let auth: Config['auth'] = null
  if (typeof valid.AUTH_FILE === 'string') {
    const loaded = readAuthFile(valid.AUTH_FILE)
    if (typeof loaded === 'string') problems.set('AUTH_FILE', `AUTH_FILE: ${loaded}`)
    else auth = loaded
  }
  const bound = auth?.keys.find((k) => k.certSubject !== undefined)
  if (bound && valid.TLS_CLIENT_CA_FILE === undefined) {
    problems.set('AUTH_FILE', `AUTH_FILE: key "${bound.name}" has a certSubject, which needs client certificates: set TLS_CLIENT_CA_FILE`)
  }
  const tls = readTlsFiles(valid as Partial<Env>, problems)
  if (problems.size > 0) throw new ConfigError([...problems.values()])

  return toConfig(valid as Env, auth, tls)
}

function toConfig(e: Env, auth: Config['auth'], tls: Pick<Config, 'redisTls' | 'https'> = { redisTls: null, https: null }): Config {
  const urls = e.REDIS_URLS.length > 0 ? e.REDIS_URLS : [e.REDIS_URL ?? DEFAULT_REDIS_URL]
  const sentinels = e.REDIS_SENTINELS
  const sentinel: SentinelConfig | null =
    e.REDIS_MODE === 'sentinel' && e.REDIS_SENTINEL_NAME !== undefined
      ? Object.freeze({
          sentinels: Object.freeze(sentinels.map((s) => Object.freeze({ host: s.host, port: s.port }))),
          name: e.REDIS_SENTINEL_NAME,
          password: e.REDIS_PASSWORD,
          sentinelPassword: e.REDIS_SENTINEL_PASSWORD ?? sentinels.find((s) => s.password !== undefined)?.password,
          tls: sentinels.some((s) => s.tls),
        })
      : null
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    probePort: e.PROBE_PORT ?? null,
    redisUrls: Object.freeze(e.REDIS_MODE === 'sentinel' ? [] : urls),
    redisMode: e.REDIS_MODE,
    sentinel,
    waitReplicas: e.REDIS_WAIT_REPLICAS,
    keyPrefix: e.KEY_PREFIX,
    defaultTtlMs: e.DEFAULT_TTL_MS,
    maxTtlMs: e.MAX_TTL_MS,
    maxWaitMs: e.MAX_WAIT_MS,
    maxLockDelayMs: e.MAX_LOCK_DELAY_MS,
    maxWatchMs: e.MAX_WATCH_MS,
    maxWaiters: e.MAX_WAITERS,
    maxReaders: e.MAX_READERS,
    maxSemaphoreLimit: e.MAX_SEMAPHORE_LIMIT,
    maxSessionHolds: e.MAX_SESSION_HOLDS,
    maxSessionsPerKey: e.MAX_SESSIONS_PER_KEY,
    nodeTimeoutMs: e.NODE_TIMEOUT_MS,
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    driftFactor: e.DRIFT_FACTOR,
    fenceRetentionMs: e.FENCE_RETENTION_MS,
    logLevel: e.LOG_LEVEL,
    auth,
    protectMetrics: e.PROTECT_METRICS === 'true',
    rateLimitPerSecond: e.RATE_LIMIT_PER_SECOND,
    rateLimitBurst: e.RATE_LIMIT_BURST ?? null,
    maxStreamsPerKey: e.MAX_STREAMS_PER_KEY,
    authFailureDelayMs: e.AUTH_FAILURE_DELAY_MS,
    ...tls,
  })
}

/** A bad value as the error line shows it: Redis URLs without their passwords. */
function shown(name: string, raw: string | undefined): string {
  if (raw === undefined) return 'nothing'
  if (name === 'REDIS_PASSWORD' || name === 'REDIS_SENTINEL_PASSWORD') return '***'
  const text = name.startsWith('REDIS_URL') || name === 'REDIS_SENTINELS' ? raw.replace(/\/\/[^@/]*@/g, '//***@') : raw
  return JSON.stringify(text)
}

/** Every setting at its default: the environment schema's defaults, with no environment. */
export const defaultConfig: Config = toConfig(envSchema.parse({}), null)

/** A frozen Config: defaults overridden by `overrides` (tests and the bench build theirs this way). */
export function configFrom(overrides: Partial<Config>): Config {
  return Object.freeze({ ...defaultConfig, ...overrides, redisUrls: Object.freeze([...(overrides.redisUrls ?? defaultConfig.redisUrls)]) })
}
