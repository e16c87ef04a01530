/**
 * `new Date(ms).toISOString()`, remembering the last answer. Formatting a date costs ~350 ns, and
 * the grants of one millisecond with one TTL all expire at the same millisecond: under load the same
 * `expiresAt` is formatted dozens of times in a row.
 */
let lastMs = Number.NaN
let lastIso = ''

export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}
