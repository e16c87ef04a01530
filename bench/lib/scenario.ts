/**
 * The shape of one benchmark scenario. Each file in bench/scenarios/ default-exports one Scenario;
 * bench/run.ts runs them in file-name order (hence the numeric prefixes), so adding a scenario is
 * adding a file.
 */
import type { BenchContext } from './context.js'

export interface Scenario {
  /** Short id, used by `npm run bench -- --only <id>` and as the key in latest.json. */
  id: string
  title: string
  /** One or two sentences: what is measured and against what. */
  description: string
  run(ctx: BenchContext): Promise<ScenarioReport>
}

export interface ScenarioReport {
  /** A markdown table: header cells and formatted rows. */
  columns: string[]
  rows: string[][]
  /** The unformatted figures (medians, ratios, per-repetition results) written to latest.json. */
  figures: Record<string, unknown>
  /** The scenario's goals, checked on this run. */
  targets?: TargetCheck[]
  notes?: string[]
}

export interface TargetCheck {
  name: string
  value: number
  /** Formatted measured value, e.g. "0.71×" or "62 MB". */
  shown: string
  /** The goal, e.g. "≥ 0.6×" or "≤ 150 MB". */
  goal: string
  pass: boolean
}
