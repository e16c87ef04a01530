/**
 * Whether a series keeps growing: the Theil–Sen slope (the median of the slopes between every pair of
 * points) of the series' floor (floorOf) over the part of the run after warm-up. Least squares was the other candidate; a heap is a
 * sawtooth (it climbs between collections and drops at each), so where the window happens to cut the
 * teeth, and the odd spike (a neighbour's process stealing the CPU, a major GC), tilt a least-squares
 * line, while the median of pairwise slopes ignores up to ~29% of bad points and a sawtooth's teeth.
 */

export interface Point {
  /** seconds since the load began */
  t: number
  v: number
}

/** The Theil–Sen slope (units per second) of the points; 0 with fewer than two distinct times. */
export function theilSen(points: readonly Point[]): number {
  const slopes: number[] = []
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const a = points[i] as Point
      const b = points[j] as Point
      if (b.t !== a.t) slopes.push((b.v - a.v) / (b.t - a.t))
    }
  }
  return median(slopes)
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** The q-quantile (0..1) by nearest rank; 0 for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((x, y) => x - y)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number
}

export interface GrowthBound {
  /** growth over the judged window allowed, as a share of the window's median (e.g. 0.1) */
  relative: number
  /** …and never flagged below this much absolute growth (a small series' noise), in the series' unit */
  absolute: number
}

export interface GrowthVerdict {
  /** units per second (Theil–Sen over the judged window) */
  slopePerSecond: number
  /** slope × the judged window's length: the growth the trend accounts for */
  growth: number
  /** the judged window's median: what `relative` is a share of */
  median: number
  /** growth / median */
  relativeGrowth: number
  /** the allowed growth: max(relative × median, absolute) */
  allowed: number
  /**
   * Where the trend ends (the Theil–Sen line at the window's end) less the highest floor point before
   * the window: how far the series ended above anything it had already reached (Infinity without a warm-up)
   */
  aboveWarmup: number
  /** the judged window, seconds since the load began */
  from: number
  to: number
  samples: number
  ok: boolean
}

/**
 * The lowest point of each of `blocks` consecutive runs of points (fewer blocks for fewer points): a
 * series' floor. A heap is a sawtooth whose teeth (young objects between two scavenges, tens of MiB
 * with a large semi-space) dwarf a slow leak; what a leak raises is the level it falls back to.
 */
export function floorOf(points: readonly Point[], blocks = 10): Point[] {
  const n = Math.min(blocks, points.length)
  const out: Point[] = []
  for (let b = 0; b < n; b++) {
    const block = points.slice(Math.floor((b * points.length) / n), Math.floor(((b + 1) * points.length) / n))
    const lowest = block.reduce<Point | undefined>((lo, p) => (lo === undefined || p.v < lo.v ? p : lo), undefined)
    if (lowest) out.push(lowest)
  }
  return out
}

/**
 * Judges the points after `warmupShare` of the run (by time): it fails when the Theil–Sen slope of
 * their floor (floorOf) adds more than the bound over that window AND the trend ends more than the
 * bound above the highest floor of the warm-up. The second condition keeps a series that fell and
 * climbed back to where it had been (RSS after the allocator handed pages back) from passing for a
 * leak; a leak keeps setting new highs. Too few points (under 5) to judge pass, with samples saying so.
 */
export function judgeGrowth(points: readonly Point[], bound: GrowthBound, warmupShare = 0.5): GrowthVerdict {
  const first = points[0]?.t ?? 0
  const last = points.at(-1)?.t ?? 0
  const from = first + (last - first) * warmupShare
  const judged = points.filter((p) => p.t >= from && Number.isFinite(p.v))
  const floor = floorOf(judged)
  const slopePerSecond = theilSen(floor)
  const span = judged.length > 1 ? (judged.at(-1) as Point).t - (judged[0] as Point).t : 0
  const growth = slopePerSecond * span
  const mid = median(judged.map((p) => p.v))
  const allowed = Math.max(bound.relative * Math.abs(mid), bound.absolute)
  const end = median(floor.map((p) => p.v - slopePerSecond * p.t)) + slopePerSecond * last
  const warmup = floorOf(points.filter((p) => p.t < from && Number.isFinite(p.v)))
  const aboveWarmup = warmup.length ? end - Math.max(...warmup.map((p) => p.v)) : Infinity
  return {
    slopePerSecond,
    growth,
    median: mid,
    relativeGrowth: mid === 0 ? 0 : growth / mid,
    allowed,
    aboveWarmup,
    from,
    to: last,
    samples: judged.length,
    ok: judged.length < 5 || growth <= allowed || aboveWarmup <= allowed,
  }
}

export interface BoundVerdict {
  /** the per-sample values' worst and the share of samples over the bound */
  worst: number
  over: number
  samples: number
  bound: number
  ok: boolean
}

/**
 * Per-sample values (e.g. each interval's event-loop delay p99) against a bound. On a shared machine
 * one sample can be a neighbour's doing: up to `tolerated` of the samples (a share, at least one) may
 * exceed it.
 */
export function judgeBound(values: readonly number[], bound: number, tolerated = 0.05): BoundVerdict {
  const over = values.filter((v) => v > bound).length
  const allowedOver = Math.max(1, Math.floor(values.length * tolerated))
  return { worst: values.length ? Math.max(...values) : 0, over, samples: values.length, bound, ok: over <= allowedOver }
}
