import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

// The Go client's own suite (clients/go), offline: no module proxy, the standard library only.
const dir = new URL('../../clients/go/', import.meta.url).pathname
const scenarios = (
  JSON.parse(readFileSync(new URL('../../clients/conformance/scenarios.json', import.meta.url), 'utf8')) as {
    scenarios: { id: string }[]
  }
).scenarios.map((s) => s.id)

const goEnv = {
  ...process.env,
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  // A fresh machine (or a CI user without a home) still has somewhere to build.
  GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'lock-service-go', 'cache'),
  GOPATH: process.env.GOPATH ?? join(tmpdir(), 'lock-service-go', 'path'),
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { cwd: dir, env: goEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

t.test('the Go client: gofmt, go vet, and its suite with one passing test per conformance scenario', { timeout: 300_000 }, async (t) => {
  const gofmt = await new Promise<string>((resolve, reject) => {
    const child = spawn('gofmt', ['-l', '.'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', () => resolve(out))
  })
  t.equal(gofmt.trim(), '', 'gofmt -l lists no file')
  const vet = await run(['vet', './...'])
  t.equal(vet.code, 0, `go vet: ${vet.output}`)

  const suite = await run(['test', '-count=1', '-v', './...'])
  t.equal(suite.code, 0, 'go test exits 0')
  if (suite.code !== 0) t.comment(suite.output.slice(-8000))
  const passed = new Set([...suite.output.matchAll(/^\s*--- PASS: TestConformance\/(\S+) /gm)].map((m) => m[1]))
  t.same(
    scenarios.filter((id) => !passed.has(id)),
    [],
    `every scenario ran and passed (${passed.size} of ${scenarios.length})`,
  )
  t.equal(passed.size, scenarios.length, 'no more passes than scenarios')
  t.match(suite.output, /^--- PASS: TestScenarioCoverage /m, 'the meta-test ran and passed')
  for (const line of suite.output.split('\n').filter((l) => /loss signal|returned .* after the block/.test(l))) t.comment(line.trim())
})
