import type { Metric, Registry } from 'prom-client'

/**
 * A histogram and a counter for the metrics every request updates. Each series (one set of label
 * values) is resolved once, by `series(labels)`, into a handle whose `observe(seconds)` / `inc()` is
 * a bucket search and a few additions: no allocation, no label validation, no hashing, no
 * number-to-string bucket keys (what a prom-client child re-does on every call).
 *
 * They register on a prom-client Registry and expose exactly what a prom-client Histogram / Counter
 * exposes for the same observations: same names, HELP, TYPE, series in the order they first appeared,
 * `_bucket` (cumulative, `le` first, `+Inf`), `_sum` and `_count`. Only for label values from a
 * bounded set (modes, outcomes, route patterns, methods, status classes, node index).
 */

type Labels<L extends string> = Record<L, string>

interface MetricValue {
  value: number
  labels: Record<string, string | number>
  metricName?: string
}

/** What the registry reads from a metric: prom-client's MetricObjectWithValues. */
interface MetricSnapshot {
  name: string
  help: string
  type: 'histogram' | 'counter'
  aggregator: 'sum'
  values: MetricValue[]
}

interface FastMetricConfig<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
  registers?: Registry[]
}

/** A series' label values, checked against the metric's label names (once, when it is resolved). */
function checkedLabels<L extends string>(metric: string, labelNames: readonly L[], labels: Labels<L>): Labels<L> {
  const given = Object.keys(labels)
  const unknown = given.find((name) => !labelNames.includes(name as L))
  if (unknown !== undefined) throw new Error(`Added label "${unknown}" is not included in initial labelset of ${metric}`)
  const missing = labelNames.find((name) => typeof labels[name] !== 'string')
  if (missing !== undefined) throw new Error(`Label "${missing}" of ${metric} needs a string value`)
  // In label-name order, whatever the caller's key order: the exposition prints them in this order.
  const ordered = {} as Labels<L>
  for (const name of labelNames) ordered[name] = labels[name]
  return ordered
}

/** The key a series is found by when it is resolved (label values in label-name order). */
function seriesKey<L extends string>(labelNames: readonly L[], labels: Labels<L>): string {
  return labelNames.map((name) => labels[name]).join('\u0000')
}

abstract class FastMetric<L extends string, S extends { shown: boolean; readonly labels: Labels<L> }> {
  readonly type: 'histogram' | 'counter'
  readonly aggregator = 'sum' as const
  // Not readonly: prom-client's registry renames counters in OpenMetrics mode.
  name: string
  help: string
  readonly labelNames: readonly L[]
  private readonly byKey = new Map<string, S>()
  /** Series with something to show, in the order they first did (prom-client's order). */
  protected shown: S[] = []

  constructor(type: 'histogram' | 'counter', config: FastMetricConfig<L>) {
    this.type = type
    this.name = config.name
    this.help = config.help
    this.labelNames = config.labelNames ?? []
    // prom-client's Registry types registerMetric as taking its own Metric class; the registry only
    // reads name, help, type, aggregator and values through get(), and calls reset() on
    // resetMetrics(), which this class provides. Undocumented: prom-client is pinned and this is
    // guarded by test/internals/private-apis.test.ts.
    for (const registry of config.registers ?? []) registry.registerMetric(this as unknown as Metric)
  }

  /** The series for these label values, made on first use and the same handle every time after. */
  series(labels: Labels<L>): S {
    const key = seriesKey(this.labelNames, labels)
    let series = this.byKey.get(key)
    if (!series) this.byKey.set(key, (series = this.create(checkedLabels(this.name, this.labelNames, labels))))
    return series
  }

  /** Shows the series at 0 from now on (prom-client's `zero` / `inc(labels, 0)`), keeping its values. */
  zero(labels: Labels<L>): void {
    this.show(this.series(labels))
  }

  /** Called by a series the first time it has something to show. */
  show(series: S): void {
    if (series.shown) return
    series.shown = true
    this.shown.push(series)
  }

  /** prom-client's resetMetrics(): every series back to 0 and out of the exposition until it is updated again. */
  reset(): void {
    for (const series of this.byKey.values()) this.clear(series)
    this.shown = []
  }

  get(): Promise<MetricSnapshot> {
    const values: MetricValue[] = []
    for (const series of this.shown) this.collect(series, values)
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values })
  }

  protected abstract create(labels: Labels<L>): S
  protected abstract clear(series: S): void
  protected abstract collect(series: S, into: MetricValue[]): void
}

/** One series of a FastHistogram: counts per bucket (not cumulative; the last slot is above every bound). */
export class HistogramSeries<L extends string = string> {
  readonly counts: Float64Array
  sum = 0
  count = 0
  shown = false

  constructor(
    private readonly owner: FastHistogram<L>,
    readonly labels: Labels<L>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(seconds: number): void {
    // A metric never fails the request it measures: a non-finite value (prom-client throws) is dropped.
    if (!Number.isFinite(seconds)) return
    // Linear from the smallest bound: nearly every observation lands in the first two or three buckets.
    let bucket = 0
    for (const bound of this.bounds) {
      if (seconds <= bound) break
      bucket++
    }
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1
    this.sum += seconds
    this.count++
    if (!this.shown) this.owner.show(this)
  }
}

export interface FastHistogramConfig<L extends string> extends FastMetricConfig<L> {
  buckets: readonly number[]
}

export class FastHistogram<L extends string = string> extends FastMetric<L, HistogramSeries<L>> {
  private readonly bounds: readonly number[]

  constructor(config: FastHistogramConfig<L>) {
    super('histogram', config)
    const increasing = config.buckets.every((bound, i) => i === 0 || bound > (config.buckets[i - 1] ?? -Infinity))
    if (!increasing) throw new Error(`Buckets of ${config.name} must increase`)
    this.bounds = [...config.buckets]
    // prom-client shows a label-less histogram at 0 from the start (but not after a reset).
    if (this.labelNames.length === 0) this.zero({} as Labels<L>)
  }

  protected create(labels: Labels<L>): HistogramSeries<L> {
    return new HistogramSeries(this, labels, this.bounds)
  }

  protected clear(series: HistogramSeries<L>): void {
    series.counts.fill(0)
    series.sum = 0
    series.count = 0
    series.shown = false
  }

  protected collect(series: HistogramSeries<L>, into: MetricValue[]): void {
    const bucketName = `${this.name}_bucket`
    let cumulative = 0
    this.bounds.forEach((bound, bucket) => {
      cumulative += series.counts[bucket] ?? 0
      into.push({ value: cumulative, labels: { le: bound, ...series.labels }, metricName: bucketName })
    })
    into.push(
      { value: series.count, labels: { le: '+Inf', ...series.labels }, metricName: bucketName },
      { value: series.sum, labels: { ...series.labels }, metricName: `${this.name}_sum` },
      { value: series.count, labels: { ...series.labels }, metricName: `${this.name}_count` },
    )
  }
}

/** One series of a FastCounter. */
export class CounterSeries<L extends string = string> {
  value = 0
  shown = false

  constructor(
    private readonly owner: FastCounter<L>,
    readonly labels: Labels<L>,
  ) {}

  inc(): void {
    this.value++
    if (!this.shown) this.owner.show(this)
  }
}

export class FastCounter<L extends string = string> extends FastMetric<L, CounterSeries<L>> {
  constructor(config: FastMetricConfig<L>) {
    super('counter', config)
    // prom-client shows a label-less counter at 0 from the start and after a reset.
    if (this.labelNames.length === 0) this.zero({} as Labels<L>)
  }

  override reset(): void {
    super.reset()
    if (this.labelNames.length === 0) this.zero({} as Labels<L>)
  }

  protected create(labels: Labels<L>): CounterSeries<L> {
    return new CounterSeries(this, labels)
  }

  protected clear(series: CounterSeries<L>): void {
    series.value = 0
    series.shown = false
  }

  protected collect(series: CounterSeries<L>, into: MetricValue[]): void {
    into.push({ value: series.value, labels: { ...series.labels } })
  }
}
