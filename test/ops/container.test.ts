/**
 * The container files, checked without a Docker engine: docker-compose.yml sets only variables the
 * config knows (and values it accepts), and the Dockerfile is multi-stage, non-root, health-checked,
 * and copies only files that exist in the repo (and that .dockerignore lets through).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import YAML from 'yaml'
import { configEnvNames, loadConfig } from '../../src/config.js'
import { serviceNodeFlags } from '../../harness/start-command.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8')

// ── docker-compose.yml ─────────────────────────────────────────────────────────────────────────────

type Env = Map<string, string | undefined>

/**
 * The environment a compose service sets: `environment` as a list (`- A=b`, or `- A` to pass the
 * host's value through) or as a map (`A: b`, `A:` / `A: null` to pass through), plus `env_file`s.
 */
function serviceEnv(service: Record<string, unknown>, baseDir = root): Env {
  const env: Env = new Map()
  const environment = service.environment
  if (Array.isArray(environment)) {
    for (const entry of environment) {
      const text = String(entry)
      const eq = text.indexOf('=')
      if (eq === -1) env.set(text.trim(), undefined)
      else env.set(text.slice(0, eq).trim(), text.slice(eq + 1))
    }
  } else if (environment && typeof environment === 'object') {
    for (const [name, value] of Object.entries(environment))
      env.set(name, value === null || value === undefined ? undefined : String(value))
  } else if (environment !== undefined) {
    throw new Error(`environment must be a list or a map, got ${JSON.stringify(environment)}`)
  }
  const envFiles = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file]
  for (const f of envFiles) {
    const file = typeof f === 'string' ? f : String((f as { path?: unknown }).path)
    for (const line of readFileSync(path.resolve(baseDir, file), 'utf8').split('\n')) {
      const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line)
      if (m?.[1]) env.set(m[1], m[2]?.trim())
    }
  }
  return env
}

/** The compose services, with YAML merge keys (`<<: *redis`) applied as Docker Compose does. */
function composeServices(): Record<string, Record<string, unknown>> {
  const doc = YAML.parse(read('docker-compose.yml'), { merge: true }) as { services?: Record<string, Record<string, unknown>> }
  return doc.services ?? {}
}

/** The services built from this repo (`build: .`). */
function builtServices(services: Record<string, Record<string, unknown>>): [string, Record<string, unknown>][] {
  return Object.entries(services).filter(([, s]) => {
    const build = s.build
    const context = typeof build === 'string' ? build : (build as { context?: string } | undefined)?.context
    return context !== undefined && path.resolve(root, context) === path.resolve(root)
  })
}

const profilesOf = (service: Record<string, unknown>) => (service.profiles as string[] | undefined) ?? []

/** The image's health check, also compose's: what test/ops/healthcheck.test.ts runs against a real service. */
const HEALTHCHECK = ['node', 'dist/healthcheck.js']

t.test('serviceEnv reads both environment forms', async (t) => {
  const list = serviceEnv({ environment: ['REDIS_URLS=redis://r:6379', 'PORT=8080', 'LOG_LEVEL', 'KEY_PREFIX=a=b:'] })
  t.same([...list.keys()], ['REDIS_URLS', 'PORT', 'LOG_LEVEL', 'KEY_PREFIX'])
  t.equal(list.get('KEY_PREFIX'), 'a=b:', 'only the first = splits')
  t.equal(list.get('LOG_LEVEL'), undefined, 'a bare name passes the host value through')
  const map = serviceEnv(
    YAML.parse('environment:\n  PORT: 8080\n  HOST: 0.0.0.0\n  LOG_LEVEL:\n  DRIFT_FACTOR: 0.02\n') as Record<string, unknown>,
  )
  t.same([...map.keys()], ['PORT', 'HOST', 'LOG_LEVEL', 'DRIFT_FACTOR'])
  t.equal(map.get('PORT'), '8080', 'numbers become strings')
  t.equal(map.get('LOG_LEVEL'), undefined)
  t.same([...serviceEnv({}).keys()], [], 'no environment at all')
  t.throws(() => serviceEnv({ environment: 'PORT=1' }), /list or a map/)
})

t.test('docker-compose.yml: each service built here sets only variables the config knows, on ports and paths that exist', async (t) => {
  const services = composeServices()
  const built = builtServices(services)
  t.same(
    built.map(([name]) => name),
    ['lock-service', 'lock-service-quorum', 'lock-service-cluster'],
    'the single-Redis service, the quorum one and the cluster one',
  )
  for (const [name, service] of built) {
    const env = serviceEnv(service)
    t.ok(env.size > 0, `${name}: sets some environment`)
    for (const variable of env.keys()) t.ok(configEnvNames.includes(variable), `${name}: ${variable} is a variable src/config.ts reads`)
    t.ok(env.has('REDIS_URLS') || env.has('REDIS_URL'), `${name}: says where Redis is`)

    const given = Object.fromEntries([...env].filter((e): e is [string, string] => e[1] !== undefined))
    const config = loadConfig(given)
    t.pass(`${name}: loadConfig accepts the values`)
    for (const url of config.redisUrls) {
      const host = new URL(url).hostname
      const redis = services[host]
      t.ok(redis, `${name}: Redis URL host ${host} is a compose service`)
      t.match(String(redis?.image), /^redis:/, `${name}: ${host} is a Redis`)
      const missing = profilesOf(redis ?? {}).filter((p) => !profilesOf(service).includes(p))
      t.same(missing, [], `${name}: ${host} starts whenever it does (profiles)`)
    }

    const ports = (service.ports as unknown[] | undefined)?.map(String) ?? []
    t.ok(ports.length > 0, `${name}: publishes a port`)
    for (const p of ports) t.equal(p.split(':').at(-1), String(config.port), `${name}: ${p} publishes the service's PORT (${config.port})`)
    for (const p of ports) t.match(p, /^127\.0\.0\.1:/, `${name}: ${p} is published on loopback only (no AUTH_FILE)`)

    const check = (service.healthcheck as { test?: unknown } | undefined)?.test
    t.same(check, ['CMD', ...HEALTHCHECK], `${name}: the image's health check (test/ops/healthcheck.test.ts runs it)`)
  }
})

t.test('docker-compose.yml: profile quorum runs three independent Redis masters for a quorum service', async (t) => {
  const services = composeServices()
  const quorum = Object.entries(services).filter(([, s]) => profilesOf(s).includes('quorum'))
  const redises = quorum.filter(([, s]) => String(s.image).startsWith('redis:')).map(([name]) => name)
  t.equal(redises.length, 3, `three Redis services in the profile (${redises.join(', ')})`)
  const [, lockQuorum] = builtServices(services).find(([name]) => name === 'lock-service-quorum') ?? ['', {}]
  const urls = loadConfig(
    Object.fromEntries([...serviceEnv(lockQuorum)].filter((e): e is [string, string] => e[1] !== undefined)),
  ).redisUrls
  t.same(urls.map((u) => new URL(u).hostname).sort(), redises.sort(), 'its REDIS_URLS name the three, each once')
  for (const redis of redises) {
    const command = (services[redis]?.command as string[] | undefined)?.join(' ') ?? ''
    t.notMatch(command, /replicaof|slaveof/i, `${redis} is a master`)
  }
  const defaults = Object.entries(services)
    .filter(([, s]) => profilesOf(s).length === 0)
    .map(([name]) => name)
  t.same(defaults.sort(), ['lock-service', 'redis'], 'without a profile: one Redis and the service')
})

t.test('docker-compose.yml: profile cluster joins six Redis into 3 masters + 3 replicas before its service starts', async (t) => {
  const services = composeServices()
  const inProfile = Object.entries(services).filter(([, s]) => profilesOf(s).includes('cluster'))
  const nodes = inProfile.filter(([, s]) => (s.command as string[] | undefined)?.join(' ').includes('--cluster-enabled yes'))
  t.equal(nodes.length, 6, `six cluster-enabled Redis (${nodes.map(([n]) => n).join(', ')})`)
  for (const [name, node] of nodes) {
    t.match(String(node.image), /^redis:7/, `${name}: Redis 7`)
    t.match((node.command as string[]).join(' '), /--appendonly yes/, `${name}: keeps its locks across a restart in place`)
  }

  const init = services['redis-cluster-init'] ?? {}
  t.same(profilesOf(init), ['cluster'], 'an init step in the profile')
  t.equal(init.restart, 'no', 'that runs once')
  const env = serviceEnv(init)
  const joined = (env.get('REDIS_CLUSTER_NODES') ?? '').split(/\s+/).filter(Boolean)
  t.same(joined.map((a) => a.split(':')[0]).sort(), nodes.map(([n]) => n).sort(), 'it joins the six, each once')
  t.equal(env.get('REDIS_CLUSTER_REPLICAS'), '1', 'as masters with one replica each: 3 + 3')
  const script = (init.volumes as string[]).map((v) => v.split(':')).find(([, target]) => (init.command as string[]).includes(target ?? ''))
  t.ok(script && existsSync(path.join(root, script[0] ?? '')), `it runs ${script?.[0]}, a file of the repository`)
  t.match(script?.[0], /deploy\/kubernetes\/overlays\/cluster\/redis-cluster-init\.sh$/, 'the script the Kubernetes overlay runs')
  const initDeps = init.depends_on as Record<string, { condition?: string }>
  for (const [name] of nodes) t.equal(initDeps[name]?.condition, 'service_healthy', `after ${name} answers`)

  const service = services['lock-service-cluster'] ?? {}
  const config = loadConfig(Object.fromEntries([...serviceEnv(service)].filter((e): e is [string, string] => e[1] !== undefined)))
  t.equal(config.redisMode, 'cluster', 'the service speaks to it as a cluster')
  t.ok(config.waitReplicas >= 1, 'and waits for a replica before answering a grant')
  for (const url of config.redisUrls) t.ok(joined.includes(`${new URL(url).hostname}:${new URL(url).port}`), `seed ${url} is a node of it`)
  t.same((service.depends_on as Record<string, { condition?: string }>)['redis-cluster-init'], {
    condition: 'service_completed_successfully',
  })
})

t.test('docker-compose.yml: Redis 7 with a health check the services wait for', async (t) => {
  const services = composeServices()
  for (const [name, service] of builtServices(services)) {
    const dependsOn = service.depends_on as Record<string, { condition?: string }> | string[] | undefined
    t.ok(dependsOn && !Array.isArray(dependsOn), `${name}: depends_on in the long form (with conditions)`)
    const deps = dependsOn && !Array.isArray(dependsOn) ? dependsOn : {}
    // A one-shot step (the cluster's init) is waited for until it has run, not until healthy.
    const redisDeps = Object.entries(deps).filter(
      ([dep, { condition }]) => String(services[dep]?.image ?? '').startsWith('redis:') && condition !== 'service_completed_successfully',
    )
    t.ok(redisDeps.length > 0, `${name}: depends on a redis service`)
    for (const [dep, { condition }] of redisDeps) {
      t.equal(condition, 'service_healthy', `${dep}: waits until healthy`)
      const redis = services[dep] ?? {}
      t.match(String(redis.image), /^redis:7(\.|$|-)/, `${dep}: Redis 7`)
      const healthcheck = redis.healthcheck as { test?: unknown } | undefined
      t.ok(healthcheck?.test, `${dep}: has a healthcheck`)
      t.match(JSON.stringify(healthcheck?.test), /redis-cli.*ping/i, `${dep}: the healthcheck pings`)
    }
  }
})

t.test('every document a shipped file names is in the repository', async (t) => {
  const shipped = ['Dockerfile', 'docker-compose.yml', 'README.md', 'openapi.yaml', 'package.json', '.dockerignore', '.ci/run']
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`],
    )
  const files = [...shipped, ...walk('src'), ...walk('scripts'), ...walk('deploy'), ...walk('docs')]
  const repoFiles = [...files, ...walk('bench'), ...walk('test'), ...walk('clients')]
  let named = 0
  for (const file of files) {
    for (const [doc] of read(file).matchAll(/[\w./-]*[\w-]+\.md\b/g)) {
      named++
      const wanted = path.normalize(doc).replace(/^(\.\.?\/)+/, '')
      t.ok(
        repoFiles.some((f) => path.normalize(f).endsWith(wanted)),
        `${file} names ${doc}: it is in the repository`,
      )
    }
  }
  t.ok(named > 0, `${named} references checked`)
  t.notMatch(read('.ci/run'), /\.\.\/shared/, '.ci/run needs nothing outside the repository')
})

// ── Dockerfile ─────────────────────────────────────────────────────────────────────────────────────

interface Instruction {
  op: string
  args: string
  stage: number
}

/** Instructions, with `\` continuations joined and comments dropped; `stage` counts FROMs (0-based). */
function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = []
  let current = ''
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*#/.test(raw)) continue
    if (/\\\s*$/.test(raw)) {
      current += raw.replace(/\\\s*$/, ' ')
      continue
    }
    current += raw
    if (current.trim() !== '') logical.push(current.trim())
    current = ''
  }
  if (current.trim() !== '') logical.push(current.trim())
  let stage = -1
  return logical.map((line) => {
    const m = /^(\S+)\s*(.*)$/s.exec(line)
    const op = (m?.[1] ?? '').toUpperCase()
    if (op === 'FROM') stage++
    return { op, args: (m?.[2] ?? '').trim(), stage }
  })
}

/** COPY/ADD arguments: flags, then sources, then the destination (shell or JSON form). */
function copyArgs(args: string): { flags: string[]; sources: string[]; dest: string } {
  const words = args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/)
  const flags = words.filter((w) => w.startsWith('--'))
  const rest = words.filter((w) => !w.startsWith('--'))
  return { flags, sources: rest.slice(0, -1), dest: rest.at(-1) ?? '' }
}

/** Files in the repo matching a COPY source (`*` and `?` within one path segment). */
function matchSource(source: string): string[] {
  const clean = source.replace(/^\.\//, '').replace(/\/$/, '')
  if (!/[*?]/.test(clean)) return existsSync(path.join(root, clean)) ? [clean] : []
  const dir = path.dirname(clean)
  const pattern = new RegExp(
    `^${path
      .basename(clean)
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')}$`,
  )
  if (!existsSync(path.join(root, dir))) return []
  return readdirSync(path.join(root, dir))
    .filter((f) => pattern.test(f))
    .map((f) => (dir === '.' ? f : `${dir}/${f}`))
}

/** The .dockerignore patterns that exclude `file` (plain names and `*` globs; `!` re-includes). */
function ignoredBy(file: string, patterns: string[]): boolean {
  let ignored = false
  for (const raw of patterns) {
    const negate = raw.startsWith('!')
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\/|\/$/g, '')
    // NUL marks '**' while '*' is rewritten.
    const DOUBLE_STAR = String.fromCharCode(0)
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replaceAll('**', DOUBLE_STAR)
        .replace(/\*/g, '[^/]*')
        .replaceAll(DOUBLE_STAR, '.*')
        .replace(/\?/g, '[^/]')}(/.*)?$`,
    )
    if (re.test(file)) ignored = !negate
  }
  return ignored
}

const dockerfile = parseDockerfile(read('Dockerfile'))
const stageCount = Math.max(...dockerfile.map((i) => i.stage)) + 1
const finalStage = stageCount - 1

t.test('parseDockerfile joins continuations and drops comments', async (t) => {
  const parsed = parseDockerfile('# c\nFROM a AS b\nRUN x \\\n  && y\n# c2\nFROM c\nCOPY --from=b /x ./x\n')
  t.same(
    parsed.map((i) => [i.op, i.stage]),
    [
      ['FROM', 0],
      ['RUN', 0],
      ['FROM', 1],
      ['COPY', 1],
    ],
  )
  t.match(parsed[1]?.args, /^x\s+&& y$/)
  t.same(copyArgs('--chown=node:node a b ./'), { flags: ['--chown=node:node'], sources: ['a', 'b'], dest: './' })
  t.same(copyArgs('["a b", "c"]'), { flags: [], sources: ['a b'], dest: 'c' })
  t.ok(ignoredBy('node_modules/x', ['node_modules']))
  t.ok(ignoredBy('a.tmp.ts', ['*.tmp.ts']))
  t.notOk(ignoredBy('src/app.ts', ['*.tmp.ts', 'test']))
  t.notOk(ignoredBy('keep.md', ['*.md', '!keep.md']))
})

t.test('Dockerfile: multi-stage build on a supported Node LTS (22 or 24), slim', async (t) => {
  const froms = dockerfile.filter((i) => i.op === 'FROM')
  t.ok(froms.length >= 2, `at least two FROM stages (got ${froms.length})`)
  for (const from of froms) t.match(from.args, /^node:(22|24)-bookworm-slim\b/, `FROM ${from.args}`)
  const runs = (stage: number) => dockerfile.filter((i) => i.op === 'RUN' && i.stage === stage).map((i) => i.args)
  const buildStage = dockerfile.find((i) => i.op === 'RUN' && /npm run build/.test(i.args))?.stage
  t.ok(buildStage !== undefined && buildStage < finalStage, 'an earlier stage runs npm run build')
  if (buildStage !== undefined)
    t.ok(
      runs(buildStage).some((r) => /npm ci(?!.*--omit=dev)/.test(r)),
      'after a full npm ci',
    )
  t.ok(
    runs(finalStage).some((r) => /npm ci\b.*--omit=dev/.test(r)),
    'the runtime installs production dependencies only',
  )
  t.notOk(
    runs(finalStage).some((r) => /npm run build|tsc/.test(r)),
    'the runtime does not compile',
  )
  const fromBuild = dockerfile.filter((i) => i.op === 'COPY' && i.stage === finalStage && /--from=/.test(i.args))
  t.ok(
    fromBuild.some((i) => copyArgs(i.args).sources.some((s) => /\/dist\/?$/.test(s))),
    'the runtime copies dist/ from the build stage',
  )
})

t.test(
  'Dockerfile: runs as a non-root user, sets only config variables, exposes its PORT, health-checks /readyz, starts dist/server.js',
  async (t) => {
    const users = dockerfile.filter((i) => i.op === 'USER' && i.stage === finalStage)
    const user = users.at(-1)?.args.split(':')[0]?.trim()
    t.ok(user, 'the runtime stage sets a USER')
    t.notOk(user === 'root' || user === '0', `USER ${user} is not root`)

    const env = new Map<string, string>()
    for (const i of dockerfile.filter((x) => x.op === 'ENV' && x.stage === finalStage)) {
      for (const m of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env.set(m[1] ?? '', (m[2] ?? '').replace(/^"|"$/g, ''))
    }
    for (const name of env.keys()) t.ok(configEnvNames.includes(name), `ENV ${name} is a variable src/config.ts reads`)
    const config = loadConfig(Object.fromEntries(env))
    const expose = dockerfile.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/))
    t.ok(expose.includes(String(config.port)) || expose.includes(`${config.port}/tcp`), `EXPOSE ${config.port}, the PORT it runs with`)

    const healthchecks = dockerfile.filter((i) => i.op === 'HEALTHCHECK' && i.stage === finalStage)
    t.equal(healthchecks.length, 1, 'one HEALTHCHECK in the runtime stage')
    const hc = healthchecks[0]?.args ?? ''
    t.same(JSON.parse(hc.replace(/^.*?CMD\s+/, '')), HEALTHCHECK, 'node runs the built src/healthcheck.ts (slim images have no curl)')
    t.ok(existsSync(new URL('../../src/healthcheck.ts', import.meta.url)), 'which the build turns into dist/healthcheck.js')

    const cmd = dockerfile.filter((i) => i.op === 'CMD' && i.stage === finalStage).at(-1)?.args ?? ''
    t.same(JSON.parse(cmd), ['node', ...serviceNodeFlags(), 'dist/server.js'], 'as npm start runs it, with the same node flags')
  },
)

t.test('Dockerfile: every file copied from the build context exists and is not dockerignored', async (t) => {
  const ignore = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
  const copied: string[] = []
  for (const i of dockerfile.filter((i) => i.op === 'COPY' || i.op === 'ADD')) {
    const { flags, sources } = copyArgs(i.args)
    if (flags.some((f) => f.startsWith('--from='))) continue
    t.ok(sources.length > 0, `${i.op} ${i.args}: has sources`)
    for (const source of sources) {
      const matches = matchSource(source)
      t.ok(matches.length > 0, `${source} exists in the repo`)
      for (const file of matches) {
        t.notOk(ignoredBy(file, ignore), `${file} is not excluded by .dockerignore`)
        copied.push(file)
      }
    }
  }
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'scripts', 'openapi.yaml']) {
    t.ok(copied.includes(needed), `${needed} is copied into the image`)
  }
  for (const heavy of ['node_modules', 'dist', '.git']) t.ok(ignoredBy(heavy, ignore), `${heavy} stays out of the build context`)
  t.ok(existsSync(path.join(root, 'scripts/copy-assets.mjs')), 'the build script that copies src/lua → dist/lua is there')
})

t.test('npm start, the image and scripts/serve.sh run the service with the same node flags', async (t) => {
  const flags = serviceNodeFlags()
  t.ok(flags.includes('--max-semi-space-size=32'), 'a young generation of 32 MB semi-spaces (docs/getting-started.md: the node flags)')
  const serve = read('scripts/serve.sh')
  t.match(serve, new RegExp(`^node ${flags.join(' ')} dist/server\\.js &$`, 'm'), 'scripts/serve.sh')
})
