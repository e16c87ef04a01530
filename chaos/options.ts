/** Command-line options of `npm run chaos`, and the command that reproduces a run. */
import { parseArgs } from 'node:util'
import { parseDuration } from '../src/contract/duration.js'
import type { FaultName } from './faults.js'
import { kindNames, MAX_CHAOS_LOCK_DELAY_MS } from './kinds/index.js'
import { scenarios, type Scenario, type ScenarioName } from './scenarios.js'

export interface Options {
  seed: number
  durationMs: number
  nodes: 1 | 3 | 5
  replicas: number
  kinds: string[]
  scenario: ScenarioName
  /** --faults: only these of the scenario's faults (undefined: all of them) */
  faults: FaultName[] | undefined
  clients: number
  /** keys per hold kind */
  keys: number
  json: string | undefined
  /** The service's environment: the defaults below, overridden by --env NAME=VALUE. */
  serviceEnv: Record<string, string>
  /** Only what was given with --env (for the reproduce line). */
  envOverrides: Record<string, string>
}

/** Short settings: a short MAX_TTL_MS and MAX_LOCK_DELAY_MS keep a restarted node's quarantine short. */
export const DEFAULT_SERVICE_ENV: Readonly<Record<string, string>> = {
  MAX_TTL_MS: '4000',
  MAX_LOCK_DELAY_MS: String(MAX_CHAOS_LOCK_DELAY_MS),
  NODE_TIMEOUT_MS: '200',
  DEFAULT_TTL_MS: '1000',
  MAX_WAIT_MS: '3000',
  DRIFT_FACTOR: '0.01',
  LOG_LEVEL: 'warn',
}

export const USAGE = `npm run chaos -- [options]

  --seed N            fault schedule and client choices (default: random, printed)
  --duration D        workload duration, e.g. 60s, 2m (default 60s)
  --nodes 1|3|5       redis-servers (default 3); cluster-* scenarios: masters, each with 2 replicas
  --replicas R        service processes, 1-4 (default 2)
  --kinds LIST        hold kinds clients use: ${kindNames().join(',')} (default all)
  --scenario NAME     ${Object.keys(scenarios).join(' | ')} (default safe)
  --faults LIST       only these of the scenario's faults, e.g. latency,slow-redis,pause-service (default all)
  --clients C         contending clients, 1-64 (default 16)
  --keys K            keys per hold kind, 1-20 (default 3)
  --env NAME=VALUE    service environment, repeatable (defaults: ${Object.entries(DEFAULT_SERVICE_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')})
  --json FILE         also write the report as JSON
`

export class UsageError extends Error {}

function integer(name: string, text: string | undefined, def: number, min: number, max: number): number {
  if (text === undefined) return def
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${text})`)
  return n
}

export function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      seed: { type: 'string' },
      duration: { type: 'string' },
      nodes: { type: 'string' },
      replicas: { type: 'string' },
      kinds: { type: 'string' },
      scenario: { type: 'string' },
      faults: { type: 'string' },
      clients: { type: 'string' },
      keys: { type: 'string' },
      env: { type: 'string', multiple: true },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  })
  if (values.help) throw new UsageError('')

  const seed = integer('seed', values.seed, Math.floor(Math.random() * 2 ** 31), 0, 2 ** 32 - 1)
  const durationMs = values.duration === undefined ? 60_000 : parseDuration(values.duration)
  if (durationMs === undefined || durationMs < 5_000 || durationMs > 3_600_000) {
    throw new UsageError(`--duration must be a duration from 5s to 1h, e.g. 60s (got ${values.duration})`)
  }
  const nodes = integer('nodes', values.nodes, 3, 1, 5)
  if (nodes !== 1 && nodes !== 3 && nodes !== 5) throw new UsageError(`--nodes must be 1, 3 or 5 (got ${nodes})`)

  const kinds = (values.kinds ?? kindNames().join(','))
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
  const unknown = kinds.filter((k) => !kindNames().includes(k))
  if (kinds.length === 0 || unknown.length > 0)
    throw new UsageError(`--kinds takes a list of ${kindNames().join(', ')} (got ${values.kinds})`)

  const scenario = (values.scenario ?? 'safe') as ScenarioName
  const chosen = scenarios[scenario]
  if (!chosen) throw new UsageError(`--scenario must be one of ${Object.keys(scenarios).join(', ')} (got ${values.scenario})`)
  if (!chosen.nodeCounts.includes(nodes)) throw new UsageError(`scenario ${scenario} runs with --nodes ${chosen.nodeCounts.join(' or ')}`)

  let faults: FaultName[] | undefined
  if (values.faults !== undefined) {
    const offered = [...new Set((chosen as Scenario).faults(nodes).map(([, name]) => name))]
    faults = [...new Set(values.faults.split(',').map((f) => f.trim()))].filter(Boolean) as FaultName[]
    const unknown = faults.filter((f) => !offered.includes(f))
    if (faults.length === 0 || unknown.length > 0)
      throw new UsageError(
        `--faults takes a list of ${scenario}'s faults on ${nodes} node(s): ${offered.join(', ')} (got ${values.faults})`,
      )
  }

  const envOverrides: Record<string, string> = {}
  for (const pair of values.env ?? []) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair)
    if (!match) throw new UsageError(`--env takes NAME=VALUE (got ${pair})`)
    if (['REDIS_URLS', 'REDIS_URL', 'PORT', 'HOST'].includes(match[1]!))
      throw new UsageError(`--env ${match[1]} is set by the suite itself`)
    envOverrides[match[1]!] = match[2]!
  }

  return {
    seed,
    durationMs,
    nodes,
    replicas: integer('replicas', values.replicas, 2, 1, 4),
    kinds: [...new Set(kinds)],
    scenario,
    faults,
    clients: integer('clients', values.clients, 16, 1, 64),
    keys: integer('keys', values.keys, 3, 1, 20),
    json: values.json,
    serviceEnv: { ...DEFAULT_SERVICE_ENV, ...envOverrides, ...(chosen as Scenario).serviceEnv },
    envOverrides,
  }
}

/** The exact command that repeats this run's schedule and client choices. */
export function reproduceCommand(o: Options): string {
  const seconds = o.durationMs % 1000 === 0 ? `${o.durationMs / 1000}s` : `${o.durationMs}ms`
  const parts = [
    'npm run chaos --',
    `--seed ${o.seed}`,
    `--duration ${seconds}`,
    `--nodes ${o.nodes}`,
    `--replicas ${o.replicas}`,
    `--kinds ${o.kinds.join(',')}`,
    `--scenario ${o.scenario}`,
    ...(o.faults ? [`--faults ${o.faults.join(',')}`] : []),
    `--clients ${o.clients}`,
    `--keys ${o.keys}`,
    ...Object.entries(o.envOverrides).map(([k, v]) => `--env ${k}=${shellQuote(v)}`),
  ]
  return parts.join(' ')
}

function shellQuote(s: string): string {
  return /^[\w.,:/=@+-]*$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

/** The numbers the suite derives its bounds from (after --env overrides). */
export interface ServiceSettings {
  maxTtlMs: number
  maxLockDelayMs: number
  nodeTimeoutMs: number
  maxWaitMs: number
  driftFactor: number
}

export function serviceSettings(env: Record<string, string>): ServiceSettings {
  const num = (name: string) => {
    const n = Number(env[name])
    if (!Number.isFinite(n) || n < 0) throw new UsageError(`--env ${name} must be a number (got ${env[name]})`)
    return n
  }
  return {
    maxTtlMs: num('MAX_TTL_MS'),
    maxLockDelayMs: num('MAX_LOCK_DELAY_MS'),
    nodeTimeoutMs: num('NODE_TIMEOUT_MS'),
    maxWaitMs: num('MAX_WAIT_MS'),
    driftFactor: num('DRIFT_FACTOR'),
  }
}
