/**
 * A small renderer of the kustomize features deploy/kubernetes uses: `resources` (files of one or
 * more documents, and directories with a kustomization.yaml), `namespace`, `patches` (JSON 6902
 * patches, inline, with a kind/name target) and `configMapGenerator` (files, without a name hash).
 * Any other field throws, so a kustomization that needs more cannot pass unrendered. Why our own:
 * the kubectl that Debian packages (1.20) embeds kustomize 2.0, which reads none of these fields,
 * and no npm package ships a kustomize (test/ops/kubernetes.test.ts compares with `kubectl
 * kustomize` where a recent kubectl is on the PATH).
 */
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'

export type Manifest = Record<string, unknown> & {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
}

interface Kustomization {
  apiVersion?: string
  kind?: string
  namespace?: string
  resources?: string[]
  patches?: { target: { kind: string; name: string }; patch: string }[]
  configMapGenerator?: { name: string; files: string[] }[]
  generatorOptions?: { disableNameSuffixHash?: boolean }
}

const KNOWN = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'patches', 'configMapGenerator', 'generatorOptions'])

/** Every document of a YAML file (empty ones dropped). */
export function readManifests(file: string): Manifest[] {
  return YAML.parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`)
      return doc.toJS() as Manifest | null
    })
    .filter((m): m is Manifest => m !== null)
}

/** The objects `kubectl kustomize dir` would print (in the order they are listed, not kubectl's). */
export function kustomize(dir: string): Manifest[] {
  const k = YAML.parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization
  const unknown = Object.keys(k).filter((key) => !KNOWN.has(key))
  if (unknown.length > 0) throw new Error(`${dir}/kustomization.yaml: this renderer does not know ${unknown.join(', ')}`)
  const out: Manifest[] = []
  for (const entry of k.resources ?? []) {
    const target = path.resolve(dir, entry)
    out.push(...(statSync(target).isDirectory() ? kustomize(target) : readManifests(target)))
  }
  for (const gen of k.configMapGenerator ?? []) {
    if (k.generatorOptions?.disableNameSuffixHash !== true) throw new Error(`${dir}: configMapGenerator needs disableNameSuffixHash`)
    const data = Object.fromEntries(gen.files.map((f) => [path.basename(f), readFileSync(path.resolve(dir, f), 'utf8')]))
    out.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: gen.name }, data })
  }
  for (const { target, patch } of k.patches ?? []) {
    const matches = out.filter((m) => m.kind === target.kind && m.metadata.name === target.name)
    if (matches.length !== 1) throw new Error(`${dir}: patch target ${target.kind}/${target.name} matches ${matches.length} objects`)
    for (const op of YAML.parse(patch) as JsonPatchOp[]) applyJsonPatch(matches[0] as Manifest, op)
  }
  if (k.namespace !== undefined) for (const m of out) m.metadata.namespace = k.namespace
  return out
}

export interface JsonPatchOp {
  op: 'add' | 'replace' | 'remove'
  path: string
  value?: unknown
}

/** RFC 6902 add, replace and remove (with RFC 6901 pointers; `-` appends to an array). */
export function applyJsonPatch(doc: unknown, { op, path: pointer, value }: JsonPatchOp): void {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
  const last = parts.pop()
  if (last === undefined) throw new Error(`${op} ${pointer}: the whole document cannot be patched`)
  let parent = doc
  for (const part of parts) {
    const next = Array.isArray(parent) ? parent[Number(part)] : (parent as Record<string, unknown> | null)?.[part]
    if (next === undefined || next === null || typeof next !== 'object') throw new Error(`${op} ${pointer}: ${part} does not exist`)
    parent = next
  }
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last)
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`${op} ${pointer}: no index ${last}`)
    if (op !== 'add' && index === parent.length) throw new Error(`${op} ${pointer}: no element ${last}`)
    if (op === 'add') parent.splice(index, 0, value)
    else if (op === 'replace') parent[index] = value
    else parent.splice(index, 1)
    return
  }
  const object = parent as Record<string, unknown>
  if (op !== 'add' && !(last in object)) throw new Error(`${op} ${pointer}: ${last} does not exist`)
  if (op === 'remove') delete object[last]
  else object[last] = value
}
