const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
const durationPattern = /^(\d{1,12}(?:\.\d{1,6})?)(ms|s|m|h)?$/

/**
 * A duration from a query string: `1500`, `1500ms`, `1.5s`, `2m`, `1h`, resolving to whole
 * milliseconds. Anything else (negative, fractional ms, other units, blanks) is undefined.
 */
export function parseDuration(text: string): number | undefined {
  const match = durationPattern.exec(text)
  if (!match) return undefined
  const unit = (match[2] ?? 'ms') as keyof typeof unitMs
  const ms = Number(match[1]) * unitMs[unit]
  const whole = Math.round(ms)
  if (Math.abs(ms - whole) > 1e-6 || !Number.isSafeInteger(whole)) return undefined
  return whole
}
