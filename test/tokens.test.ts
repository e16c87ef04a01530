import t from 'tap'
import { newToken } from '../src/http/tokens.js'

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
