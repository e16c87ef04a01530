/** isoTime: the grant's `expiresAt` formatting, which remembers its last answer. */
import t from 'tap'
import { isoTime } from '../../src/locks/iso-time.js'

t.test('every answer is the ISO 8601 form of its own time, repeated or not', async (t) => {
  const base = Date.UTC(2026, 10, 24, 1, 2, 3, 456)
  // Repeats, a step forward, a step back to an earlier time, a year and a day boundary.
  const times = [base, base, base + 1, base + 1, base, base + 86_400_000, Date.UTC(2027, 0, 1) - 1, Date.UTC(2027, 0, 1), 0]
  for (const ms of times) t.equal(isoTime(ms), new Date(ms).toISOString(), `${ms}`)
  t.equal(isoTime(base), '2026-11-24T01:02:03.456Z')
})

t.test('a time that is no date throws, as Date does, and leaves the next answer right', async (t) => {
  t.throws(() => isoTime(Number.NaN), RangeError)
  t.throws(() => isoTime(8.64e15 + 1), RangeError)
  t.equal(isoTime(1), '1970-01-01T00:00:00.001Z')
})
