/**
 * loadConfig(env): defaults, every variable, readable errors (one line per bad variable), a frozen
 * result; and the server refusing to start on a bad environment.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { writeAuthFile } from '../helpers/auth-file.js'
import { ConfigError, configEnvNames, defaultConfig, loadConfig, type Config } from '../../src/config.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The assertions these helpers use (a subtest's `t` has them all). */
type Asserts = Pick<typeof t, 'ok' | 'equal' | 'fail' | 'type'>

/** The ConfigError loadConfig throws for `env` (fails the test when it does not throw one). */
function problemsOf(t: Asserts, env: Record<string, string | undefined>): readonly string[] {
  try {
    const config = loadConfig(env)
    t.fail(`expected a ConfigError, got ${JSON.stringify(config)}`)
    return []
  } catch (err) {
    t.type(err, ConfigError, 'a ConfigError')
    if (!(err instanceof ConfigError)) return []
    t.equal(err.name, 'ConfigError')
    for (const p of err.problems) t.ok(err.message.includes(p), `the message lists "${p}"`)
    return err.problems
  }
}

/** Exactly one problem line per variable in `names`, each starting with the variable's name. */
function expectProblems(t: Asserts, env: Record<string, string | undefined>, names: string[]): readonly string[] {
  const problems = problemsOf(t, env)
  t.equal(problems.length, names.length, `one line per bad variable: ${JSON.stringify(problems)}`)
  for (const name of names) {
    t.equal(problems.filter((p) => p.startsWith(`${name}:`)).length, 1, `one line names ${name}`)
  }
  return problems
}

t.test('configEnvNames lists exactly the documented variables', async (t) => {
  t.same([...configEnvNames].sort(), [
    'AUTH_FAILURE_DELAY_MS',
    'AUTH_FILE',
    'BODY_TIMEOUT_MS',
    'DEFAULT_TTL_MS',
    'DRIFT_FACTOR',
    'FENCE_RETENTION_MS',
    'HOST',
    'KEY_PREFIX',
    'LOG_LEVEL',
    'MAX_LOCK_DELAY_MS',
    'MAX_READERS',
    'MAX_SEMAPHORE_LIMIT',
    'MAX_SESSIONS_PER_KEY',
    'MAX_SESSION_HOLDS',
    'MAX_STREAMS_PER_KEY',
    'MAX_TTL_MS',
    'MAX_WAITERS',
    'MAX_WAIT_MS',
    'MAX_WATCH_MS',
    'NODE_TIMEOUT_MS',
    'PORT',
    'PROBE_PORT',
    'PROTECT_METRICS',
    'RATE_LIMIT_BURST',
    'RATE_LIMIT_PER_SECOND',
    'REDIS_MODE',
    'REDIS_PASSWORD',
    'REDIS_SENTINELS',
    'REDIS_SENTINEL_NAME',
    'REDIS_SENTINEL_PASSWORD',
    'REDIS_TLS_CA_FILE',
    'REDIS_TLS_CERT_FILE',
    'REDIS_TLS_KEY_FILE',
    'REDIS_URL',
    'REDIS_URLS',
    'REDIS_WAIT_REPLICAS',
    'TLS_CERT_FILE',
    'TLS_CLIENT_CA_FILE',
    'TLS_KEY_FILE',
  ])
  t.ok(Object.isFrozen(configEnvNames))
})

t.test('defaults', async (t) => {
  const expected: Config = {
    port: 8080,
    host: '0.0.0.0',
    probePort: null,
    redisUrls: ['redis://127.0.0.1:6379'],
    redisMode: 'standalone',
    sentinel: null,
    waitReplicas: 0,
    keyPrefix: 'lock-service:',
    defaultTtlMs: 30_000,
    maxTtlMs: 3_600_000,
    maxWaitMs: 60_000,
    maxLockDelayMs: 60_000,
    maxWatchMs: 600_000,
    maxWaiters: 10_000,
    maxReaders: 1_000,
    maxSemaphoreLimit: 10_000,
    maxSessionHolds: 1_000,
    maxSessionsPerKey: 10_000,
    nodeTimeoutMs: 500,
    bodyTimeoutMs: 10_000,
    driftFactor: 0.01,
    fenceRetentionMs: 3_600_000,
    logLevel: 'info',
    auth: null,
    protectMetrics: false,
    rateLimitPerSecond: 0,
    rateLimitBurst: null,
    maxStreamsPerKey: 1_000,
    authFailureDelayMs: 100,
    redisTls: null,
    https: null,
  }
  t.same(loadConfig({}), expected, 'an empty environment gives the defaults')
  t.same(defaultConfig, expected, 'defaultConfig agrees')
  const blanks = Object.fromEntries(configEnvNames.map((k) => [k, '']))
  t.same(loadConfig(blanks), expected, 'empty strings count as unset')
  t.same(loadConfig({ UNRELATED: 'x', PATH: '/bin' }), expected, 'other variables are ignored')
})

t.test('every variable is parsed', async (t) => {
  const config = loadConfig({
    PORT: '9090',
    HOST: '127.0.0.1',
    PROBE_PORT: '9091',
    REDIS_URLS: ' redis://a:6379 , redis://:pw@b:6380/2,rediss://c:6381 ',
    KEY_PREFIX: 'svc.locks@prod=1+x:',
    DEFAULT_TTL_MS: '15000',
    MAX_TTL_MS: '600000',
    MAX_WAIT_MS: '120000',
    MAX_LOCK_DELAY_MS: '15000',
    MAX_WATCH_MS: '300000',
    MAX_WAITERS: '50',
    MAX_READERS: '64',
    MAX_SEMAPHORE_LIMIT: '500',
    MAX_SESSION_HOLDS: '20',
    MAX_SESSIONS_PER_KEY: '30',
    NODE_TIMEOUT_MS: '250',
    BODY_TIMEOUT_MS: '5000',
    DRIFT_FACTOR: '0.02',
    FENCE_RETENTION_MS: '600000',
    LOG_LEVEL: 'debug',
    RATE_LIMIT_PER_SECOND: '50',
    RATE_LIMIT_BURST: '200',
    MAX_STREAMS_PER_KEY: '7',
    AUTH_FAILURE_DELAY_MS: '0',
  })
  t.same(config, {
    port: 9090,
    host: '127.0.0.1',
    probePort: 9091,
    redisUrls: ['redis://a:6379', 'redis://:pw@b:6380/2', 'rediss://c:6381'],
    redisMode: 'standalone',
    sentinel: null,
    waitReplicas: 0,
    keyPrefix: 'svc.locks@prod=1+x:',
    defaultTtlMs: 15_000,
    maxTtlMs: 600_000,
    maxWaitMs: 120_000,
    maxLockDelayMs: 15_000,
    maxWatchMs: 300_000,
    maxWaiters: 50,
    maxReaders: 64,
    maxSemaphoreLimit: 500,
    maxSessionHolds: 20,
    maxSessionsPerKey: 30,
    nodeTimeoutMs: 250,
    bodyTimeoutMs: 5000,
    driftFactor: 0.02,
    fenceRetentionMs: 600_000,
    logLevel: 'debug',
    auth: null,
    protectMetrics: false,
    rateLimitPerSecond: 50,
    rateLimitBurst: 200,
    maxStreamsPerKey: 7,
    authFailureDelayMs: 0,
    redisTls: null,
    https: null,
  })
  t.equal(typeof config.port, 'number')
  t.equal(typeof config.driftFactor, 'number')
})

t.test('bounds that are allowed', async (t) => {
  t.equal(loadConfig({ PORT: '0' }).port, 0, 'PORT 0: any free port')
  t.equal(loadConfig({ PORT: '65535' }).port, 65535)
  t.equal(loadConfig({ MAX_WAIT_MS: '0' }).maxWaitMs, 0, 'MAX_WAIT_MS 0: never wait')
  t.equal(loadConfig({ DRIFT_FACTOR: '0' }).driftFactor, 0)
  t.equal(loadConfig({ MAX_SEMAPHORE_LIMIT: '1' }).maxSemaphoreLimit, 1, 'MAX_SEMAPHORE_LIMIT 1: semaphores of one permit')
  t.equal(loadConfig({ MAX_SEMAPHORE_LIMIT: '1000000' }).maxSemaphoreLimit, 1_000_000)
  t.equal(loadConfig({ DRIFT_FACTOR: '0.5' }).driftFactor, 0.5)
  t.equal(loadConfig({ KEY_PREFIX: '' }).keyPrefix, 'lock-service:', 'an empty KEY_PREFIX is unset: the default')
  const same = loadConfig({ DEFAULT_TTL_MS: '1000', MAX_TTL_MS: '1000' })
  t.equal(same.defaultTtlMs, 1000, 'DEFAULT_TTL_MS may equal MAX_TTL_MS')
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
    t.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level, `LOG_LEVEL ${level}`)
  }
})

t.test('Redis URLs: the list, the REDIS_URL alias, node counts', async (t) => {
  t.same(loadConfig({ REDIS_URL: 'redis://solo:6379' }).redisUrls, ['redis://solo:6379'], 'REDIS_URL alone')
  t.same(loadConfig({ REDIS_URL: ' redis://solo:6379 ' }).redisUrls, ['redis://solo:6379'], 'REDIS_URL is trimmed')
  t.same(
    loadConfig({ REDIS_URL: 'redis://a:1', REDIS_URLS: 'redis://a:1,redis://b:2,redis://c:3' }).redisUrls,
    ['redis://a:1', 'redis://b:2', 'redis://c:3'],
    'REDIS_URL agreeing with one of REDIS_URLS is fine',
  )
  t.same(loadConfig({ REDIS_URLS: 'redis://a:1,' }).redisUrls, ['redis://a:1'], 'a trailing comma is ignored')
  for (const n of [1, 3, 5, 7]) {
    const urls = Array.from({ length: n }, (_, i) => `redis://node${i}:6379`)
    t.same(loadConfig({ REDIS_URLS: urls.join(',') }).redisUrls, urls, `${n} nodes`)
  }
  for (const n of [2, 4, 6]) {
    const urls = Array.from({ length: n }, (_, i) => `redis://node${i}:6379`)
    const [line] = expectProblems(t, { REDIS_URLS: urls.join(',') }, ['REDIS_URLS'])
    t.match(line, new RegExp(`${n} nodes`), `${n} nodes refused, saying why`)
  }
  const eight = Array.from({ length: 8 }, (_, i) => `redis://node${i}:6379`).join(',')
  expectProblems(t, { REDIS_URLS: eight }, ['REDIS_URLS'])
  expectProblems(t, { REDIS_URL: 'redis://x:1', REDIS_URLS: 'redis://y:1' }, ['REDIS_URL'])
})

t.test('bad URLs are refused', async (t) => {
  for (const bad of ['not a url', 'http://redis:6379', 'redis://', 'localhost:6379', 'redis//host:6379']) {
    expectProblems(t, { REDIS_URLS: bad }, ['REDIS_URLS'])
    expectProblems(t, { REDIS_URL: bad }, ['REDIS_URL'])
  }
  const [line] = expectProblems(t, { REDIS_URLS: 'redis://a:1,http://b:2,redis://c:3' }, ['REDIS_URLS'])
  t.match(line, /redis:\/\//, 'the line says what a URL must look like')
})

t.test('each bad value gives one line naming its variable', async (t) => {
  const cases: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PROBE_PORT', '65536'],
    ['PROBE_PORT', 'health'],
    ['DEFAULT_TTL_MS', '99'],
    ['DEFAULT_TTL_MS', 'soon'],
    ['MAX_TTL_MS', 'never'],
    ['MAX_TTL_MS', '86400001'],
    ['MAX_LOCK_DELAY_MS', '-1'],
    ['MAX_LOCK_DELAY_MS', '2s'],
    ['MAX_WAIT_MS', '-1'],
    ['MAX_WAIT_MS', '1.5'],
    ['MAX_WAITERS', '0'],
    ['MAX_SEMAPHORE_LIMIT', '0'],
    ['MAX_SEMAPHORE_LIMIT', '1000001'],
    ['MAX_SEMAPHORE_LIMIT', 'many'],
    ['MAX_SEMAPHORE_LIMIT', '2.5'],
    ['NODE_TIMEOUT_MS', '5'],
    ['NODE_TIMEOUT_MS', 'fast'],
    ['DRIFT_FACTOR', 'abc'],
    ['DRIFT_FACTOR', '-0.1'],
    ['DRIFT_FACTOR', '0.6'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO'],
    ['KEY_PREFIX', 'app{x}:'],
    ['KEY_PREFIX', 'app}:'],
    ['KEY_PREFIX', 'has space:'],
    ['KEY_PREFIX', 'p'.repeat(65)],
    ['RATE_LIMIT_PER_SECOND', '-1'],
    ['RATE_LIMIT_PER_SECOND', '1.5'],
    ['MAX_STREAMS_PER_KEY', '0'],
    ['AUTH_FAILURE_DELAY_MS', '10001'],
    ['AUTH_FAILURE_DELAY_MS', 'slow'],
  ]
  for (const [name, value] of cases) {
    const [line] = expectProblems(t, { [name]: value }, [name])
    t.ok(line?.includes(JSON.stringify(value)), `${name}=${value}: the line shows the value given`)
  }
  const negative = problemsOf(t, { MAX_TTL_MS: '-5' })
  t.equal(negative.filter((p) => p.startsWith('MAX_TTL_MS:')).length, 1, 'MAX_TTL_MS=-5 has its line')
})

t.test('several bad variables at once: several lines', async (t) => {
  const problems = expectProblems(
    t,
    { PORT: 'abc', MAX_TTL_MS: '-5', LOG_LEVEL: 'loud', KEY_PREFIX: '{x}', DRIFT_FACTOR: '2', REDIS_URLS: 'http://x' },
    ['PORT', 'MAX_TTL_MS', 'LOG_LEVEL', 'KEY_PREFIX', 'DRIFT_FACTOR', 'REDIS_URLS'],
  )
  t.equal(new Set(problems).size, problems.length, 'no duplicate lines')
  const messageLines = (() => {
    try {
      loadConfig({ PORT: 'abc', MAX_TTL_MS: '-5' })
    } catch (err) {
      return (err as Error).message.split('\n')
    }
    return []
  })()
  t.equal(messageLines.length, 3, 'the message: a heading and one line per variable')
  t.match(messageLines[1], /^\s+PORT:/)
  t.match(messageLines[2], /^\s+MAX_TTL_MS:/)
})

t.test('DEFAULT_TTL_MS above MAX_TTL_MS is refused', async (t) => {
  const [line] = expectProblems(t, { DEFAULT_TTL_MS: '5000', MAX_TTL_MS: '1000' }, ['DEFAULT_TTL_MS'])
  t.match(line, /MAX_TTL_MS/, 'the line names the limit it exceeds')
  expectProblems(t, { MAX_TTL_MS: '1000' }, ['DEFAULT_TTL_MS']) // the default 30 s is above it
  t.equal(loadConfig({ MAX_TTL_MS: '1000', DEFAULT_TTL_MS: '500' }).maxTtlMs, 1000)
})

t.test('PROBE_PORT must differ from PORT (0 for both: two free ports)', async (t) => {
  const [line] = expectProblems(t, { PORT: '9000', PROBE_PORT: '9000' }, ['PROBE_PORT'])
  t.match(line, /PORT \(9000\)/, 'the line names the port it collides with')
  expectProblems(t, { PROBE_PORT: '8080' }, ['PROBE_PORT']) // PORT's default
  t.equal(loadConfig({ PORT: '0', PROBE_PORT: '0' }).probePort, 0)
  t.equal(loadConfig({ PROBE_PORT: '9091' }).probePort, 9091)
})

t.test('RATE_LIMIT_BURST needs RATE_LIMIT_PER_SECOND; a key may have its own rate', async (t) => {
  const [line] = expectProblems(t, { RATE_LIMIT_BURST: '10' }, ['RATE_LIMIT_BURST'])
  t.match(line, /RATE_LIMIT_PER_SECOND/)
  t.equal(loadConfig({ RATE_LIMIT_PER_SECOND: '5' }).rateLimitBurst, null, 'no burst given: one second of the rate')
  const key = { name: 'k', secret: 'sk_k_0123456789abcdef', prefixes: [] }
  const own = loadConfig({ AUTH_FILE: writeAuthFile([{ ...key, rateLimit: { perSecond: 3, burst: 9 } }]) })
  t.same(own.auth?.keys[0]?.rateLimit, { perSecond: 3, burst: 9 })
  for (const rateLimit of [{ perSecond: -1 }, { perSecond: 1.5 }, { perSecond: 1, burst: 0 }, { perSecond: 1, per: 's' }]) {
    const file = writeAuthFile([{ ...key, rateLimit: rateLimit as { perSecond: number } }])
    const [bad] = expectProblems(t, { AUTH_FILE: file }, ['AUTH_FILE'])
    t.match(bad, /keys\.0\.rateLimit/, `rateLimit ${JSON.stringify(rateLimit)} is refused, naming the field`)
  }
})

t.test('the Config is frozen', async (t) => {
  const config = loadConfig({ REDIS_URLS: 'redis://a:1,redis://b:2,redis://c:3' })
  t.ok(Object.isFrozen(config), 'the config')
  t.ok(Object.isFrozen(config.redisUrls), 'its URL list')
  t.throws(() => {
    ;(config as { port: number }).port = 1
  }, TypeError)
  t.throws(() => {
    ;(config.redisUrls as string[]).push('redis://d:4')
  }, TypeError)
  t.equal(config.port, 8080)
  t.equal(config.redisUrls.length, 3)
  t.ok(Object.isFrozen(loadConfig({})), 'the defaults too')
})

t.test('the server refuses to start on a bad environment, naming each bad variable', async (t) => {
  const tsx = `${root}node_modules/.bin/tsx`
  t.ok(existsSync(tsx), 'tsx is installed (devDependency)')
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: 'abc', MAX_TTL_MS: '-5' }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  // If it started anyway, it would never exit by itself: make sure it does not outlive the test.
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  )
  t.equal(signal, null, 'it exits by itself')
  t.not(code, 0, `a non-zero exit code (got ${code})`)
  const lines = stderr.split('\n')
  t.equal(lines.filter((l) => /^\s*PORT:/.test(l)).length, 1, `a line for PORT in:\n${stderr}`)
  t.equal(lines.filter((l) => /^\s*MAX_TTL_MS:/.test(l)).length, 1, 'a line for MAX_TTL_MS')
  t.match(stderr, /"abc"/, 'the bad PORT value is shown')
  t.match(stderr, /"-5"/, 'the bad MAX_TTL_MS value is shown')
  t.notMatch(stdout, /lock-service ready/, 'it never became ready')
})
