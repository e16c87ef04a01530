import t from 'tap'
import { delayBreaches, type DelayedEnd, type GrantSeen } from '../../chaos/delay-check.js'

const lapsed = (mode: DelayedEnd['mode'], end = 1000, delayMs = 500): DelayedEnd => ({
  key: 'k',
  namespace: 'rwlocks',
  mode,
  start: 100,
  end,
  delayMs,
})
const granted = (mode: GrantSeen['mode'], doneAt: number, at = doneAt - 5, key = 'k'): GrantSeen => ({
  key,
  namespace: 'rwlocks',
  mode,
  at,
  doneAt,
})

t.test('a conflicting grant answered before the delay ended is a breach; at or after it, not', async (t) => {
  t.equal(delayBreaches([lapsed('write')], [granted('write', 1200)]).length, 1, 'a write within a write hold’s delay')
  t.equal(delayBreaches([lapsed('write')], [granted('read', 1400)]).length, 1, 'a read within a write hold’s delay')
  t.equal(delayBreaches([lapsed('write')], [granted('write', 1500)]).length, 0, 'answered when the delay ended')
  t.equal(delayBreaches([lapsed('write')], [granted('write', 1700)]).length, 0, 'after it')
})

t.test('what a delay does not cover', async (t) => {
  t.equal(delayBreaches([lapsed('read')], [granted('read', 1200)]).length, 0, 'a read hold’s delay keeps out writers only')
  t.equal(delayBreaches([lapsed('read')], [granted('write', 1200)]).length, 1, 'a writer within it is a breach')
  t.equal(delayBreaches([lapsed('write')], [granted('write', 1200, 1200, 'other')]).length, 0, 'another key')
  t.equal(
    delayBreaches([lapsed('write')], [granted('write', 1200, 50)]).length,
    0,
    'asked for before the hold was granted (an overlap, not a delay)',
  )
  t.equal(
    delayBreaches([lapsed('write')], [granted('write', 900)]).length,
    0,
    'answered within the hold’s window (an overlap, the history’s)',
  )
  t.equal(
    delayBreaches([lapsed('permit')], [granted('permit', 1200)]).length,
    0,
    "a semaphore's delay keeps permits, counted by the history",
  )
})
