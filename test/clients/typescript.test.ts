/**
 * The TypeScript client package (clients/typescript): its wire types are what openapi.yaml generates,
 * and `npm pack` ships its built JS and types (and nothing else). Its conformance suite runs through
 * tap's include (clients/typescript/test).
 */
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { clientTypesPath, generateClientTypes } from '../../scripts/client-types.js'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('../../clients/typescript', import.meta.url))

t.test('clients/typescript/src/generated/openapi.ts is what openapi.yaml generates (run `npm run client-types`)', async (t) => {
  t.equal(await readFile(clientTypesPath, 'utf8'), await generateClientTypes(), 'no drift')
})

t.test('npm pack: the built JS and its types, package.json and README; no sources or tests', async (t) => {
  // prepack builds dist/ with the root's TypeScript first.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false'], { cwd: packageDir })
  const [pack] = JSON.parse(stdout) as { name: string; files: { path: string }[] }[]
  const files = (pack?.files ?? []).map((f) => f.path).sort()
  t.equal(pack?.name, '@lock-service/client')
  for (const file of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/client.js',
    'dist/client.d.ts',
    'dist/watchdog.js',
    'package.json',
    'README.md',
  ]) {
    t.ok(files.includes(file), `ships ${file}`)
  }
  t.same(
    files.filter((f) => !/^dist\/.+\.(js|d\.ts)$/.test(f) && f !== 'package.json' && f !== 'README.md'),
    [],
    'nothing else (no sources, tests or maps)',
  )
  const manifest = JSON.parse(await readFile(`${packageDir}/package.json`, 'utf8')) as Record<string, unknown>
  t.same(manifest.dependencies ?? {}, {}, 'no runtime dependencies')
  t.match(manifest, { type: 'module', engines: { node: '>=20.19' }, exports: { '.': { types: './dist/index.d.ts' } } })
})
