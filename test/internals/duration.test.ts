/** parseDuration: the query-string durations of the contract (README) (`1500`, `1500ms`, `1.5s`, `2m`, `1h`), in whole ms. */
import t from 'tap'
import { parseDuration } from '../../src/contract/duration.js'

t.test('accepted forms resolve to whole milliseconds', async (t) => {
  const accepted: [string, number][] = [
    ['1500', 1500],
    ['1500ms', 1500],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0.5s', 500],
    ['0', 0],
    ['100', 100],
    ['100ms', 100],
    ['30s', 30_000],
    ['1.25m', 75_000],
    ['0.5h', 1_800_000],
    ['1.1s', 1100], // 1.1 × 1000 is 1100.0000000000002 in floating point: still 1100
    ['2.3m', 138_000],
    ['0.001s', 1],
  ]
  for (const [text, ms] of accepted) {
    t.equal(parseDuration(text), ms, `${JSON.stringify(text)} → ${ms}`)
  }
  t.equal(parseDuration('0.000001h'), undefined, '0.000001 h is 3.6 ms: not whole')
  t.equal(parseDuration('007'), 7, 'leading zeros are still a number')
  t.equal(parseDuration('1.000000s'), 1000, 'trailing zeros after the point are fine')
  t.equal(parseDuration('999999999999'), 999_999_999_999, 'twelve digits of ms')
})

t.test('rejected forms are undefined', async (t) => {
  const rejected = [
    '', // empty
    ' ', // blank
    ' 1s', // leading space
    '1s ', // trailing space
    '1 s', // space before the unit
    'abc',
    's',
    'ms',
    '-1', // negative
    '-1s',
    '+1s', // sign
    '1d', // unknown unit
    '1w',
    '1us',
    '1S', // units are lower case
    '1MS',
    '1H',
    '1sec',
    '1min',
    '1.5ms', // fractional milliseconds
    '1.5', // fractional ms without a unit
    '1.0001s', // 1000.1 ms
    '0.0001s', // 0.1 ms
    '.5s', // no leading digit
    '5.s', // no digit after the point
    '1,5s', // comma decimal
    '1e3', // exponent
    '1e3ms',
    '0x10', // hex
    'Infinity',
    'NaN',
    '1h30m', // compound
    '1s1',
    '1.2.3s',
    '1.1234567s', // more than six decimals
    '1234567890123', // more than twelve digits
    '999999999999h', // beyond Number.MAX_SAFE_INTEGER ms
  ]
  for (const text of rejected) {
    t.equal(parseDuration(text), undefined, `${JSON.stringify(text)} is refused`)
  }
})

t.test('results are always safe whole numbers', async (t) => {
  let accepted = 0
  for (const unit of ['', 'ms', 's', 'm', 'h']) {
    for (const n of ['0', '1', '0.5', '0.25', '0.125', '0.1', '0.2', '0.3', '1.7', '2.9', '59.999', '123456.654321']) {
      const ms = parseDuration(`${n}${unit}`)
      if (ms === undefined) continue
      accepted++
      t.ok(Number.isSafeInteger(ms) && ms >= 0, `${n}${unit} → ${ms}`)
    }
  }
  t.ok(accepted > 20, `most of these are accepted (${accepted})`)
})
