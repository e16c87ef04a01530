/** A hand-written SVG of a soak run's series: stacked panels sharing the time axis. Pure functions. */
import type { RunReport } from './report.js'
import { floorOf, median, theilSen, type GrowthVerdict, type Point } from './trend.js'

export interface Line {
  name: string
  points: readonly Point[]
  color: string
  dashed?: boolean
}

export interface Panel {
  title: string
  lines: readonly Line[]
  /** a horizontal line: the bound the series is held to */
  bound?: number
}

const WIDTH = 860
const PANEL_H = 150
const GAP = 46
const LEFT = 70
const RIGHT = 170
const TOP = 40
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e']

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))

/** Renders the panels one under another; the time axis (seconds) spans every point given. */
export function renderSvg(title: string, panels: readonly Panel[]): string {
  const all = panels.flatMap((p) => p.lines.flatMap((l) => l.points)).filter((p) => Number.isFinite(p.v))
  const t0 = Math.min(0, ...all.map((p) => p.t))
  const t1 = Math.max(t0 + 1, ...all.map((p) => p.t))
  const plotW = WIDTH - LEFT - RIGHT
  const x = (t: number) => LEFT + ((t - t0) / (t1 - t0)) * plotW
  const height = TOP + panels.length * (PANEL_H + GAP)
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${LEFT}" y="22" font-size="14" font-weight="bold">${escape(title)}</text>`,
  ]
  panels.forEach((panel, i) => {
    const top = TOP + i * (PANEL_H + GAP) + 16
    const values = panel.lines.flatMap((l) => l.points.map((p) => p.v)).filter(Number.isFinite)
    if (panel.bound !== undefined) values.push(panel.bound)
    let lo = Math.min(0, ...values)
    let hi = Math.max(...values, lo + 1e-9)
    if (hi === lo) hi = lo + 1
    hi += (hi - lo) * 0.05
    lo = Math.min(lo, 0)
    const y = (v: number) => top + PANEL_H - ((v - lo) / (hi - lo)) * PANEL_H
    out.push(`<text x="${LEFT}" y="${top - 5}" font-weight="bold">${escape(panel.title)}</text>`)
    out.push(`<rect x="${LEFT}" y="${top}" width="${plotW}" height="${PANEL_H}" fill="none" stroke="#999"/>`)
    for (const v of [lo, (lo + hi) / 2, hi]) {
      out.push(`<text x="${LEFT - 4}" y="${y(v) + 4}" text-anchor="end">${fmt(v)}</text>`)
      out.push(`<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`)
    }
    for (let k = 0; k <= 4; k++) {
      const t = t0 + ((t1 - t0) * k) / 4
      out.push(`<text x="${x(t)}" y="${top + PANEL_H + 13}" text-anchor="middle">${fmt(t)} s</text>`)
    }
    if (panel.bound !== undefined) {
      out.push(
        `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y(panel.bound)}" y2="${y(panel.bound)}" stroke="#d62728" stroke-dasharray="2 3"/>`,
      )
    }
    panel.lines.forEach((line, j) => {
      const pts = line.points.filter((p) => Number.isFinite(p.v))
      if (pts.length === 0) return
      const d = pts.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ')
      const dash = line.dashed ? ' stroke-dasharray="6 4"' : ''
      out.push(`<polyline fill="none" stroke="${line.color}" stroke-width="1.5"${dash} points="${d}"/>`)
      const ly = top + 12 + j * 14
      out.push(`<line x1="${LEFT + plotW + 10}" x2="${LEFT + plotW + 26}" y1="${ly - 4}" y2="${ly - 4}" stroke="${line.color}"${dash}/>`)
      out.push(`<text x="${LEFT + plotW + 30}" y="${ly}">${escape(line.name)}</text>`)
    })
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** The Theil–Sen line of the floor over a growth verdict's window, as two points (for a dashed overlay). */
export function trendLine(points: readonly Point[], v: Pick<GrowthVerdict, 'from' | 'to'>): Point[] {
  const judged = points.filter((p) => p.t >= v.from && Number.isFinite(p.v))
  if (judged.length < 2) return []
  const floor = floorOf(judged)
  const slope = theilSen(floor)
  const intercept = median(floor.map((p) => p.v - slope * p.t))
  return [v.from, v.to].map((t) => ({ t, v: intercept + slope * t }))
}

const MiB = 1024 * 1024

/** The title of one run's plot. */
export function runTitle(r: Pick<RunReport, 'label' | 'durationS' | 'rate'>): string {
  return `lock-service soak: ${r.label}, ${r.durationS.toFixed(0)} s at ${r.rate} operations/s`
}

/** The panels of one run: service memory, Redis memory and keys, event-loop delay, client latency, load. */
export function runPanels(r: RunReport, lagBoundMs: number): Panel[] {
  const s = r.samples
  const at = (pick: (x: (typeof s)[number]) => number, scale = 1) => s.map((x) => ({ t: x.t, v: pick(x) / scale }))
  const rss = at((x) => x.rssBytes, MiB)
  const heap = at((x) => x.heapUsedBytes, MiB)
  const nodes = r.growth.redisMemory.map((_, i) => i)
  return [
    {
      title: 'Service memory (MiB): RSS and heap used; dashed: Theil–Sen trend of the floor after warm-up',
      lines: [
        { name: 'RSS', points: rss, color: COLORS[0] as string },
        { name: 'RSS trend', points: trendLine(rss, r.growth.rss), color: COLORS[0] as string, dashed: true },
        { name: 'heap used', points: heap, color: COLORS[1] as string },
        { name: 'heap trend', points: trendLine(heap, r.growth.heap), color: COLORS[1] as string, dashed: true },
      ],
    },
    {
      title: 'Redis used_memory (MiB) per node',
      lines: nodes.map((i) => ({ name: `node ${i}`, points: at((x) => x.redisUsedMemory[i] ?? NaN, MiB), color: COLORS[i % 5] as string })),
    },
    {
      title: 'Redis keys (DBSIZE) per node',
      lines: nodes.map((i) => ({ name: `node ${i}`, points: at((x) => x.redisKeys[i] ?? NaN), color: COLORS[i % 5] as string })),
    },
    {
      title: `Event-loop delay p99 per interval (ms); dotted: the bound (${lagBoundMs} ms)`,
      lines: [{ name: 'event-loop p99', points: at((x) => x.eventLoopP99Ms), color: COLORS[3] as string }],
      bound: lagBoundMs,
    },
    {
      title: 'Client-side latency p99 per interval (ms), requests not waiting in line',
      lines: [{ name: 'client p99', points: at((x) => x.latencyP99Ms), color: COLORS[4] as string }],
    },
    {
      title: 'Load: requests/s, errors/s, active handles',
      lines: [
        { name: 'requests/s', points: at((x) => x.requestsPerSecond), color: COLORS[2] as string },
        { name: 'errors/s', points: at((x) => x.errorsPerSecond), color: COLORS[1] as string },
        { name: 'active handles', points: at((x) => x.activeHandles), color: COLORS[0] as string },
      ],
    },
  ]
}
