/**
 * Summarise a V8 .cpuprofile (from `npm run bench -- --profile`, or `node --cpu-prof`): where the
 * process spent its CPU, by package / source file (self time) and by function (self and total time).
 *
 *   node --import tsx bench/profile-summary.ts /tmp/lock-service-bench-profiles/service-n1.cpuprofile [--top 40] [--grep text]
 *
 * Idle time and the profiler's own samples are left out of the percentages.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  hitCount?: number
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples?: number[]
}

process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1))

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, grep: { type: 'string' } },
})
const file = positionals[0]
if (!file) {
  process.stderr.write('usage: profile-summary.ts FILE.cpuprofile [--top N] [--grep TEXT]\n')
  process.exit(2)
}
const top = Number(values.top)
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)'])
const totalHits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0)
const idleHits = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((s, n) => s + (n.hitCount ?? 0), 0)
const busyHits = totalHits - idleHits
const msPerHit = (profile.endTime - profile.startTime) / 1000 / Math.max(1, totalHits)

function where(frame: CallFrame): string {
  if (IDLE.has(frame.functionName) || frame.url === '') return frame.functionName || '(native)'
  const url = frame.url.replace(/^file:\/\//, '')
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1] as string
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`
  const src = /\/(dist|src|bench)\/(.*)$/.exec(url)
  return src ? `${src[1]}/${src[2]}` : url
}
function label(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`
}

const self = new Map<string, number>()
const selfByWhere = new Map<string, number>()
const total = new Map<string, number>()
for (const n of profile.nodes) {
  const hits = n.hitCount ?? 0
  if (hits === 0 || n.callFrame.functionName === '(idle)') continue
  self.set(label(n.callFrame), (self.get(label(n.callFrame)) ?? 0) + hits)
  selfByWhere.set(where(n.callFrame), (selfByWhere.get(where(n.callFrame)) ?? 0) + hits)
  // Total time: credit every distinct frame on the stack once.
  const seen = new Set<string>()
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const frame = (byId.get(id) as ProfileNode).callFrame
    const l = label(frame)
    if (!seen.has(l)) {
      seen.add(l)
      total.set(l, (total.get(l) ?? 0) + hits)
    }
  }
}

const pct = (hits: number) => `${((100 * hits) / Math.max(1, busyHits)).toFixed(1).padStart(5)} %`
const print = (title: string, map: Map<string, number>, n: number) => {
  process.stdout.write(`\n${title}\n`)
  const rows = [...map]
    .filter(([k]) => !values.grep || k.includes(values.grep))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
  for (const [k, hits] of rows) process.stdout.write(`${pct(hits)}  ${(hits * msPerHit).toFixed(0).padStart(7)} ms  ${k}\n`)
}

process.stdout.write(
  `${file}: ${((busyHits * msPerHit) / 1000).toFixed(1)} s busy of ${((totalHits * msPerHit) / 1000).toFixed(1)} s sampled\n`,
)
print('self time by package / file', selfByWhere, top)
print('self time by function', self, top)
print('total time by function (callees included)', total, top)
