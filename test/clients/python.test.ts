import { spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'

/** clients/python's own suite (unittest, against the conformance environment it starts) and its offline install. */
const root = new URL('../..', import.meta.url).pathname
const scenarios = (
  JSON.parse(readFileSync(path.join(root, 'clients/conformance/scenarios.json'), 'utf8')) as { scenarios: { id: string }[] }
).scenarios

function run(command: string, args: string[], cwd = root): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, output }))
  })
}

t.test('the Python library passes its suite: every conformance scenario, the watchdog rules, the API', async (t) => {
  const suite = await run('python3', ['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-t', 'clients/python', '-v'])
  t.equal(suite.code, 0, 'the suite exited 0', { output: suite.code === 0 ? undefined : suite.output.slice(-6000) })
  // unittest -v: "test_<id> (tests.test_conformance.Conformance…) ... ok", a warning possibly printed between the two.
  const passed = new Set<string>()
  for (const record of suite.output.split(/^(?=test_\w+ \()/m)) {
    const id = /^test_(\w+) \(tests\.test_conformance\.Conformance\b/.exec(record)?.[1]
    if (id !== undefined && /(^|\.\.\. )ok$/m.test(record) && !/(^|\.\.\. )(FAIL|ERROR)$/m.test(record)) passed.add(id)
  }
  t.same(
    scenarios.filter((s) => !passed.has(s.id)).map((s) => s.id),
    [],
    'every scenario ran and passed',
  )
  t.equal(passed.size, scenarios.length, `${scenarios.length} scenarios passed`)
  t.match(suite.output, /test_every_scenario_has_a_test .* \.\.\. ok$/m, 'the meta-test ran')
})

/**
 * The interpreter that builds the package: python3 on the PATH when it has venv, setuptools and wheel
 * (`--no-build-isolation` builds with what is installed), else Debian's (python3-venv, python3-setuptools
 * and python3-pip, which brings python3-wheel). pyenv's interpreters have no `wheel`.
 */
function builder(): string | undefined {
  const check = 'import venv, setuptools, wheel; assert int(setuptools.__version__.split(".")[0]) >= 61'
  return ['python3', '/usr/bin/python3'].find((python) => spawnSync(python, ['-c', check]).status === 0)
}

t.test('pip installs it offline (--no-index --no-build-isolation) in a throwaway venv', async (t) => {
  const python = builder()
  if (python === undefined) return t.fail('no python3 with venv, setuptools >= 61 and wheel (scripts/ensure-deps.sh --tests installs them)')
  const dir = mkdtempSync(path.join(tmpdir(), 'lock-service-py-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // A copy, so the build leaves nothing (build/, *.egg-info) in the working tree.
  const source = path.join(dir, 'python')
  cpSync(path.join(root, 'clients/python'), source, { recursive: true, filter: (p) => !/__pycache__|\.egg-info|[/\\]build$/.test(p) })
  const venv = path.join(dir, 'venv')
  t.equal((await run(python, ['-m', 'venv', '--system-site-packages', venv])).code, 0, `${python} made a venv`)
  const pip = await run(path.join(venv, 'bin/pip'), ['install', '--no-index', '--no-build-isolation', source])
  t.equal(pip.code, 0, 'pip install worked', { output: pip.code === 0 ? undefined : pip.output.slice(-3000) })
  const imported = await run(path.join(venv, 'bin/python'), ['-c', 'import lock_service; print(lock_service.__file__)'], dir)
  t.equal(imported.code, 0)
  t.ok(imported.output.trim().startsWith(venv), `imported from the venv: ${imported.output.trim()}`)
})
