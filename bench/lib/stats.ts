/** Small statistics and number formatting helpers shared by the load runner and the scenarios. */

export interface Percentiles {
  count: number
  mean: number
  p50: number
  p90: number
  p99: number
  max: number
}

/** A growable list of float samples (latencies in ms), cheap to append to on the hot path. */
export class Samples {
  private data = new Float64Array(1 << 14)
  private n = 0

  add(value: number): void {
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.n++] = value
  }

  get count(): number {
    return this.n
  }

  values(): Float64Array {
    return this.data.subarray(0, this.n)
  }

  static merge(list: readonly Samples[]): Samples {
    const out = new Samples()
    for (const s of list) for (const v of s.values()) out.add(v)
    return out
  }

  /** Nearest-rank percentiles. */
  percentiles(): Percentiles {
    const sorted = Float64Array.from(this.values()).sort()
    const n = sorted.length
    if (n === 0) return { count: 0, mean: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN }
    const at = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))] as number
    let sum = 0
    for (const v of sorted) sum += v
    return { count: n, mean: sum / n, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[n - 1] as number }
  }
}

/** NaN is left out, and so is ±Infinity unless `keepInfinity` (e.g. a max ÷ min whose min was 0). */
export function median(values: readonly number[], keepInfinity = false): number {
  const kept = values.filter((v) => (keepInfinity ? !Number.isNaN(v) : Number.isFinite(v))).sort((a, b) => a - b)
  const n = kept.length
  if (n === 0) return NaN
  const mid = Math.floor(n / 2)
  return n % 2 === 1 ? (kept[mid] as number) : ((kept[mid - 1] as number) + (kept[mid] as number)) / 2
}

export function ratio(a: number, b: number): number {
  return b === 0 || !Number.isFinite(a) || !Number.isFinite(b) ? NaN : a / b
}

/** 12345.6 → "12,346"; 12.34 → "12.3"; 0.1234 → "0.123". */
export function fmtNumber(value: number): string {
  if (!Number.isFinite(value)) return '–'
  const abs = Math.abs(value)
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US')
  if (abs >= 100) return value.toFixed(0)
  if (abs >= 10) return value.toFixed(1)
  if (abs >= 1) return value.toFixed(2)
  return value.toFixed(3)
}

export function fmtMs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2) : '–'
}

export function fmtRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
}

export function fmtPercent(value: number): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '–'
}

/** Round for JSON: 4 significant digits is more than the noise allows. */
export function round(value: number): number | null {
  if (!Number.isFinite(value)) return null
  if (value === 0) return 0
  const digits = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(value))))
  return Number(value.toFixed(Math.min(digits, 6)))
}

/** `round` over every figure of a record. */
export function roundAll<T extends Record<string, number>>(figures: T): Record<keyof T, number | null> {
  return Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, round(v)])) as Record<keyof T, number | null>
}
