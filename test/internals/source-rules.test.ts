/**
 * Rules of the source tree that review alone would let slip: short lines, no import cycles between
 * modules (type-only imports included: a circle of types is a circle of concerns), and script replies
 * read by position only in their decoders.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  )
}

const files = filesUnder(src).filter((f) => /\.(ts|lua)$/.test(f))
const rel = (file: string) => path.relative(src, file)

t.test('no line in src/ is over 140 characters', async (t) => {
  const long = files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (line.length > 140 ? [`${rel(file)}:${i + 1} (${line.length})`] : [])),
  )
  t.same(long, [])
})

/** The modules a TypeScript file imports or re-exports from, type-only ones included. */
export function importsOf(file: string, text: string): string[] {
  const specs = [...text.matchAll(/^(?:import|export)\s+[^'";]*?from\s+'(\.[^']+)'/gm)].map((m) => m[1] as string)
  return specs.map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts')))
}

t.test('importsOf reads imports and re-exports, type-only ones too', async (t) => {
  const text = "import { a } from './a.js'\nimport type { B } from './b.js'\nexport { c } from '../c.js'\nexport type { D } from './d.js'\n"
  t.same(importsOf('/x/y/f.ts', text), ['/x/y/a.ts', '/x/y/b.ts', '/x/c.ts', '/x/y/d.ts'])
})

t.test('no import cycle between modules in src/', async (t) => {
  const graph = new Map<string, string[]>()
  for (const file of files.filter((f) => f.endsWith('.ts'))) graph.set(file, importsOf(file, readFileSync(file, 'utf8')))
  const cycles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].map(rel).join(' → '))
      return
    }
    state.set(file, 'open')
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  t.same(cycles, [])
})

t.test('script replies are read by position only in their decoders (src/locks/scripts/)', async (t) => {
  const positional = /\b(?:r|reply|replies|a\.value|answer\.value)\[\d+\]/
  const found = files
    .filter((f) => f.endsWith('.ts') && !rel(f).startsWith(path.join('locks', 'scripts')))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (positional.test(line) ? [`${rel(file)}:${i + 1}: ${line.trim()}`] : [])),
    )
  t.same(found, [])
})
