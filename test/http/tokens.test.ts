import t from 'tap'
import { newToken, oneOf } from '../../src/http/tokens.js'

t.test('server-made tokens: 22 base64url characters, 128 bits, never starting with "-" or "_"', async (t) => {
  const tokens = Array.from({ length: 5000 }, () => newToken())
  t.ok(
    tokens.every((tk) => /^[A-Za-z0-9][A-Za-z0-9_-]{21}$/.test(tk)),
    'the form (a leading "-" would read as an option to lockctl)',
  )
  t.equal(new Set(tokens).size, tokens.length, 'no repeats')
  const firsts = new Set(tokens.map((tk) => tk[0]))
  t.ok(firsts.size >= 55, `the first character still varies (${firsts.size} of 62 seen)`)
})

t.test('oneOf: the value a field is given, whichever way; two different values are a 400', async (t) => {
  t.equal(oneOf('ttl', undefined, undefined), undefined)
  t.equal(oneOf('ttl', undefined, undefined, undefined), undefined)
  t.equal(oneOf('ttl', 5, undefined), 5)
  t.equal(oneOf('ttl', undefined, 5), 5)
  t.equal(oneOf('token', undefined, undefined, 'abc'), 'abc')
  t.equal(oneOf('token', 'abc', 'abc', 'abc'), 'abc', 'the same value given three ways')
  t.equal(oneOf('flag', false, undefined), false, 'a false value counts as given')
  for (const values of [
    [1, 2],
    [undefined, 1, 2],
    [1, undefined, 2],
    [1, 1, 2],
  ] as const) {
    t.throws(
      () => oneOf('ttl', values[0], values[1], values[2]),
      { name: 'ServiceError', code: 'invalid_request', message: /ttl is given more than once/ },
      JSON.stringify(values),
    )
  }
})
