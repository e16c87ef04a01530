/**
 * The nodes of a quorum share one call's arguments (src/redis/node.ts, sharedCallArgs): made once
 * for the three nodes asked in one go, and made afresh for the next call, even when its input is the
 * same object changed since.
 */
import t from 'tap'
import { startRedis } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'
import { lockKeys } from '../../src/locks/keys.js'
import { acquireScript, type AcquireInput } from '../../src/locks/scripts/acquire.js'
import { ReplyCode } from '../../src/redis/scripts.js'
import { writeHoldInput } from '../helpers/acquire-input.js'

t.test('one call to three nodes makes its arguments once; the next call makes its own', async (t) => {
  const servers = await Promise.all([0, 1, 2].map(() => startRedis({ t })))
  const { app, config } = await startApp(
    t,
    servers.map((s) => s.url),
  )
  t.equal(app.quorum.size, 3)
  let made = 0
  const counting = {
    ...acquireScript,
    args(input: AcquireInput) {
      made++
      return acquireScript.args(input)
    },
  }
  const keys = lockKeys(config.keyPrefix, 'lock', 'shared-args')
  const input = writeHoldInput('token-first-0000000000', { attempt: 'a1' })
  const ask = () => app.quorum.ask((node) => node.call(counting, keys.all, input))
  const codes = (tally: Awaited<ReturnType<typeof ask>>) => tally.answers.map((a) => a.ok && a.value.code)

  const first = await ask()
  t.equal(made, 1, 'three nodes, one set of arguments')
  t.same(codes(first), [ReplyCode.GRANTED, ReplyCode.GRANTED, ReplyCode.GRANTED], 'every node granted')

  // The same input object, changed: another token, so every node must refuse it.
  input.token = 'token-second-000000000'
  input.attempt = 'a2'
  const second = await ask()
  t.equal(made, 2, 'the next call makes its own')
  t.same(
    codes(second),
    [ReplyCode.HELD, ReplyCode.HELD, ReplyCode.HELD],
    'every node was sent the changed input (refused: another token holds it)',
  )
})
