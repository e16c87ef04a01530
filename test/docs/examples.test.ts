// Every shell block of README.md and docs/*.md runs verbatim, under the default configuration, against a
// live service on a free port with its own redis-server. Only two things are rewritten, in the test and
// not in the text: localhost:8080 becomes the test's address, and a watch's long poll waits 1 s.
// A block that cannot run here says why on the line above it: <!-- not run: REASON -->.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { loadConfig } from '../../src/config.js'
import { parseDuration } from '../../src/contract/duration.js'
import { lockctlBundle } from '../helpers/lockctl.js'
import { codeBlocks, docFiles, read, SHELL_LANGS, type CodeBlock } from './markdown.js'

/** Generous: each lockctl call starts a Node process, slow on a busy 2-core machine. */
const BLOCK_TIMEOUT_MS = 60_000
/** An example's output is read by a person: a screenful, not the whole of /metrics. */
const MAX_OUTPUT_LINES = 60

/** The block as the test runs it: the service's address, and short long polls. */
export function forTest(code: string, hostPort: string): string {
  return code.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, hostPort).replace(/(\/watch\?(?:[^'"\s]*&)?wait=)[0-9.]+(ms|s|m|h)?/g, '$11s')
}

t.test('the rewrite touches only the address and a watch’s wait', async (t) => {
  t.equal(forTest("curl -s 'localhost:8080/locks/a?wait=20s'", '127.0.0.1:5'), "curl -s '127.0.0.1:5/locks/a?wait=20s'")
  t.equal(forTest('curl "localhost:8080/locks/a/watch?wait=60s" x', 'h:1'), 'curl "h:1/locks/a/watch?wait=1s" x')
  t.equal(forTest('GET /sessions/$S/watch?token=x&wait=2m', 'h:1'), 'GET /sessions/$S/watch?token=x&wait=1s')
})

const shellBlocks = docFiles().flatMap((file) => codeBlocks(file, read(file)).filter((b) => SHELL_LANGS.has(b.lang)))

t.test('every shell block runs, or says why not', async (t) => {
  t.ok(shellBlocks.length > 10, `${shellBlocks.length} shell blocks found`)
  for (const b of shellBlocks.filter((b) => b.notRun !== undefined)) {
    t.ok(b.notRun!.length >= 8, `${b.file}:${b.line}: the reason it is not run is given ("${b.notRun}")`)
  }
  t.ok(shellBlocks.filter((b) => b.file === 'README.md' && b.notRun === undefined).length >= 2, 'the README has blocks that run')
})

// The service runs with the configuration an empty environment gives (npm run serve's), on the test's Redis.
const { redisUrls: _defaultRedis, ...defaults } = loadConfig({})

/** Every wait a text asks for (`wait=30s`, `--wait 1m`, `"waitMs": 10000`), as written; `watch`: a watch's or an observe's long poll. */
export function waitsIn(code: string): { wait: string; watch: boolean }[] {
  return [...code.matchAll(/(\/(?:watch|observe)(?:\?[^'"\s]*?)?)?(?:[?&]wait=|--wait[ =])([0-9.]+[a-z]*)|"waitMs":\s*([0-9]+)/g)].map(
    (m) => ({
      wait: m[2] ?? m[3]!,
      watch: m[1] !== undefined,
    }),
  )
}

t.test('waits are found however they are written', async (t) => {
  t.same(
    waitsIn(
      `curl 'h/x/watch?wait=10m' -d '{"waitMs": 5000}'; lockctl run k --wait 5m -- true; curl 'h?ttl=1s&wait=2s'; curl 'h/watch?token=t&wait=1m'; curl 'h/e/observe?wait=1s'`,
    ),
    [
      { wait: '10m', watch: true },
      { wait: '5000', watch: false },
      { wait: '5m', watch: false },
      { wait: '2s', watch: false },
      { wait: '1m', watch: true },
      { wait: '1s', watch: true },
    ],
  )
})

t.test('the defaults are what the examples assume', async (t) => {
  t.equal(defaults.maxWaitMs, 60_000, 'examples wait in line at most 60 s')
  t.equal(defaults.maxWatchMs, 600_000, 'examples watch at most 10 min')
  t.equal(defaults.auth, null, 'the service is open: no API key needed')
})

// The test shortens a watch's wait, so check what the text asks for against the limit first.
t.test('no example waits longer than MAX_WAIT_MS (in line) or MAX_WATCH_MS (a watch) allows', async (t) => {
  const blocks = docFiles().flatMap((file) => codeBlocks(file, read(file)))
  for (const block of blocks) {
    for (const { wait, watch } of waitsIn(block.code)) {
      const ms = parseDuration(wait)
      const limit = watch ? defaults.maxWatchMs : defaults.maxWaitMs
      t.ok(ms !== undefined && ms <= limit, `${block.file}:${block.line}: wait ${wait} is at most ${limit} ms`)
    }
  }
})

const redis = await startRedis({ t })
const service = await startListening(t, [redis.url], defaults)
const hostPort = new URL(service.address).host

// lockctl as the docs call it: a `lockctl` on the PATH (here: the sources, bundled by esbuild).
const bin = mkdtempSync(path.join(tmpdir(), 'docs-examples-bin-'))
t.teardown(() => rmSync(bin, { recursive: true, force: true }))
writeFileSync(path.join(bin, 'lockctl'), `#!/bin/sh\nexec "${process.execPath}" "${lockctlBundle()}" "$@"\n`)
chmodSync(path.join(bin, 'lockctl'), 0o755)

interface Ran {
  code: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

/** Runs a block with bash -e (a failed command fails it; a pipeline's status is its last command's, as in a terminal) in a scratch directory; its whole process group is killed at the timeout. */
function run(block: CodeBlock): Promise<Ran> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'docs-example-'))
  const child = spawn('bash', ['-e', '-c', forTest(block.code, hostPort)], {
    cwd,
    detached: true,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, LOCK_SERVICE_URL: service.address, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    process.kill(-child.pid!, 'SIGKILL')
  }, BLOCK_TIMEOUT_MS)
  // 'close' waits for every process holding the block's output: a background job left running counts.
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer)
      rmSync(cwd, { recursive: true, force: true })
      resolve({ code, stdout, stderr, timedOut })
    }),
  )
}

const serverErrors = () =>
  service.logs().filter((l) => Number((l.res as { statusCode?: number } | undefined)?.statusCode) >= 500 || Number(l.level) >= 50)

for (const block of shellBlocks.filter((b) => b.notRun === undefined)) {
  t.test(`${block.file}:${block.line}`, async (t) => {
    const flushed = redis.client()
    await flushed.flushall()
    flushed.disconnect()
    const errorsBefore = serverErrors().length
    const started = performance.now()
    const ran = await run(block)
    const tookMs = performance.now() - started
    const shown = { stdout: ran.stdout.slice(-4000), stderr: ran.stderr.slice(-4000) }
    t.notOk(ran.timedOut, `finished within ${BLOCK_TIMEOUT_MS / 1000} s, background jobs included`, shown)
    // The examples that wait in line show a hand-off: an answer when the wait ran out instead is a broken wake-up.
    const inLine = waitsIn(block.code).flatMap(({ wait, watch }) => (watch ? [] : [parseDuration(wait) ?? Infinity]))
    if (inLine.length > 0) {
      const shortest = Math.min(...inLine)
      t.ok(tookMs < shortest, `ran ${Math.round(tookMs)} ms, less than its shortest wait in line (${shortest} ms)`)
    }
    t.equal(ran.code, 0, 'exits 0', shown)
    t.equal(ran.stderr, '', 'writes nothing to stderr', shown)
    t.ok(ran.stdout.trim().length > 0, 'prints something', shown)
    const lines = ran.stdout.split('\n').length
    t.ok(lines <= MAX_OUTPUT_LINES, `prints what a person reads: ${lines} lines, at most ${MAX_OUTPUT_LINES}`, shown)
    t.same(serverErrors().slice(errorsBefore), [], 'no 5xx answer and no error logged by the service')
  })
}

/** The examples in lockctl's own help (`e.g. …`), run like a docs block, against the same service. */
const lockctlHelp = ['--help', ...['run', 'acquire', 'renew', 'release', 'status', 'list'].map((c) => `help ${c}`)]
  .map((args) => execFileSync(path.join(bin, 'lockctl'), args.split(' '), { encoding: 'utf8' }))
  .join('\n')
const helpExamples = [...lockctlHelp.matchAll(/e\.g\. (lockctl .+|[A-Z_]+=\$\(lockctl .+\))\.?$/gm)].map((m) => m[1] as string)

t.test('lockctl --help has examples, and they name no wait over the limits', async (t) => {
  t.ok(helpExamples.length > 0, `found ${helpExamples.length}`)
  for (const example of helpExamples) {
    for (const { wait } of waitsIn(example)) t.ok((parseDuration(wait) ?? Infinity) <= defaults.maxWaitMs, `${example}: wait ${wait}`)
  }
})

for (const example of new Set(helpExamples)) {
  t.test(`lockctl --help: ${example}`, async (t) => {
    const flushed = redis.client()
    await flushed.flushall()
    flushed.disconnect()
    const errorsBefore = serverErrors().length
    const ran = await run({ file: 'lockctl --help', line: 0, lang: 'sh', code: example })
    t.notOk(ran.timedOut, 'finished')
    t.equal(ran.code, 0, 'exits 0', ran)
    t.equal(ran.stderr, '', 'writes nothing to stderr', ran)
    t.same(serverErrors().slice(errorsBefore), [], 'no 5xx answer and no error logged by the service')
  })
}
