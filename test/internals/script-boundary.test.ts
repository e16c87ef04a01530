import { readFileSync } from 'node:fs'
import t from 'tap'
import { ReplyCode, scriptNames, ScriptReplyError, type Script } from '../../src/redis/scripts.js'
import { acquireScript } from '../../src/locks/scripts/acquire.js'
import { fenceCommitScript } from '../../src/locks/scripts/fence_commit.js'
import { forceReleaseScript } from '../../src/locks/scripts/force_release.js'
import { holdLabelScript } from '../../src/locks/scripts/hold_label.js'
import { inspectScript } from '../../src/locks/scripts/inspect.js'
import { fenceCheckScript } from '../../src/locks/scripts/fence_check.js'
import { leaveScript } from '../../src/locks/scripts/leave.js'
import { ownersScript } from '../../src/locks/scripts/owners.js'
import { releaseScript } from '../../src/locks/scripts/release.js'
import { renewScript } from '../../src/locks/scripts/renew.js'
import { rollbackScript } from '../../src/locks/scripts/rollback.js'
import { touchScript } from '../../src/locks/scripts/touch.js'
import { holdDropBoundScript } from '../../src/locks/scripts/hold_drop_bound.js'
import { holdRenewBoundScript } from '../../src/locks/scripts/hold_renew_bound.js'
import { holdStateScript } from '../../src/locks/scripts/hold_state.js'
import { keySessionsScript } from '../../src/locks/scripts/key_sessions.js'
import { sessionBindScript } from '../../src/locks/scripts/session_bind.js'
import { sessionCloseScript } from '../../src/locks/scripts/session_close.js'
import { sessionKeepaliveScript } from '../../src/locks/scripts/session_keepalive.js'
import { sessionOpenScript } from '../../src/locks/scripts/session_open.js'
import { sessionShowScript } from '../../src/locks/scripts/session_show.js'
import { sessionUnbindScript } from '../../src/locks/scripts/session_unbind.js'
import { sessionsIndexScript } from '../../src/locks/scripts/sessions_index.js'
import { watchScript } from '../../src/locks/scripts/watch.js'
import { electionStampScript } from '../../src/locks/scripts/election_stamp.js'
import { electionStateScript } from '../../src/locks/scripts/election_state.js'

// The script boundary: codes by name in the Lua, and decoders that know every shape their script
// sends (what they decode to is exercised through the app in test/locks and test/quorum).
const scripts: Script<never, unknown>[] = [
  acquireScript,
  renewScript,
  releaseScript,
  rollbackScript,
  fenceCommitScript,
  inspectScript,
  fenceCheckScript,
  forceReleaseScript,
  holdLabelScript,
  ownersScript,
  leaveScript,
  touchScript,
  sessionOpenScript,
  sessionKeepaliveScript,
  sessionBindScript,
  sessionUnbindScript,
  sessionCloseScript,
  sessionShowScript,
  keySessionsScript,
  sessionsIndexScript,
  holdRenewBoundScript,
  holdDropBoundScript,
  holdStateScript,
  watchScript,
  electionStampScript,
  electionStateScript,
]

t.test('every script has one definition', async (t) => {
  t.same(scripts.map((s) => s.name).sort(), [...scriptNames].sort())
})

const lua = (name: string) => readFileSync(new URL(`../../src/lua/${name}.lua`, import.meta.url), 'utf8')

/**
 * Scripts whose reply is data, not a code and its fields (inspect.lua: counts and expiries; owners.lua: labels;
 * fence_check.lua: fences and a count).
 */
const dataReplies: ReadonlySet<string> = new Set(['inspect', 'owners', 'fence_check'])

t.test('each script returns its codes by name, names only codes ReplyCode declares, and says so in its header', async (t) => {
  for (const script of scripts) {
    const source = lua(script.name)
    const code = source.replace(/--.*$/gm, '')
    if (!dataReplies.has(script.name)) t.notMatch(code, /\{\s*-?\d/, `${script.name}.lua: no reply table starts with a bare number`)
    const returned = [...code.matchAll(/(?:return|reply =) (?:with_slots\(|granted\(|with_own_pushes\()?\{?\s*([A-Z_]+)\b/g)].map(
      (m) => m[1] as string,
    )
    const header = [...source.matchAll(/^--(?: Returns)?\s+\{ ([A-Z_]+)/gm)].map((m) => m[1] as string)
    for (const name of new Set([...returned, ...header])) t.ok(name in ReplyCode, `${script.name}.lua: ${name} is a ReplyCode`)
    t.same([...new Set(header)].sort(), [...new Set(returned)].sort(), `${script.name}.lua: its header names the codes it returns`)
  }
})

t.test('a reply its decoder does not know is a ScriptReplyError (a failed answer), never a value', async (t) => {
  for (const script of scripts) {
    const coded = !dataReplies.has(script.name)
    const answersNotOwner = /\{ NOT_OWNER \}/.test(lua(script.name))
    const unknown = [[], 'OK', null, ...(coded ? [[99]] : []), ...(coded && !answersNotOwner ? [[ReplyCode.NOT_OWNER]] : [])]
    for (const reply of unknown) {
      t.throws(() => script.decode(reply), ScriptReplyError, `${script.name}: ${JSON.stringify(reply)}`)
    }
  }
})

t.test('decoded shapes', async (t) => {
  t.same(fenceCheckScript.decode([0, 1, 2, 90]), { writerFence: 0, readerHasFence: true, liveReaders: 2, highestReaderFence: 90 })
  t.throws(() => fenceCheckScript.decode([0, 2, 2, 90]), ScriptReplyError, 'a flag that is neither 0 nor 1')
  t.throws(() => fenceCheckScript.decode([7, 0, 0]), ScriptReplyError, 'a field missing')
  t.same(sessionKeepaliveScript.decode([1, 5000, 42, 'exclusive|tok|a', 0, 'bogus', 7, 'read|t2|b', 40]), {
    code: ReplyCode.RENEWED,
    ttlMs: 5000,
    now: 42,
    holds: [
      { hold: { entry: 'exclusive|tok|a', kind: 'exclusive', token: 'tok', key: 'a' }, boundAt: 0 },
      { hold: { entry: 'read|t2|b', kind: 'read', token: 't2', key: 'b' }, boundAt: 40 },
    ],
  })
  t.same(sessionsIndexScript.decode([ReplyCode.COUNTED, 3, 1]), { code: ReplyCode.COUNTED, live: 3, expired: 1 })
  t.same(holdRenewBoundScript.decode([1, 7, 1, 900, 2, 3, 0, 2]), {
    code: ReplyCode.RENEWED,
    fence: 7,
    holdCount: 1,
    ttlMs: 900,
    slots: '0,2',
  })
  t.same(holdRenewBoundScript.decode([1, 7, 1, 900]), { code: ReplyCode.RENEWED, fence: 7, holdCount: 1, ttlMs: 900, slots: '' })
  t.same(watchScript.decode([-2, 'force_released', 123, 0]), {
    code: ReplyCode.NOT_FOUND,
    reason: 'force_released',
    atMs: 123,
    othersHold: false,
  })
  t.same(
    watchScript.decode([-2, '', 0, 1]),
    { code: ReplyCode.NOT_FOUND, reason: undefined, atMs: 0, othersHold: true },
    'no record; another holds it',
  )
  t.same(
    watchScript.decode([-2, 'expired', 5, 0]),
    { code: ReplyCode.NOT_FOUND, reason: undefined, atMs: 5, othersHold: false },
    'never a kept reason',
  )
  t.same(releaseScript.decode([ReplyCode.RELEASED, 0]), { code: ReplyCode.RELEASED, pushes: [] })
  t.same(
    releaseScript.decode([ReplyCode.RELEASED, 0, 'r1.a|77|1700000000000000', 'r1.b']),
    { code: ReplyCode.RELEASED, pushes: ['r1.a|77|1700000000000000', 'r1.b'] },
    "a release's reply carries the pushes to its replica's waiters",
  )
  t.throws(() => releaseScript.decode([ReplyCode.RELEASED, 0, 5]), ScriptReplyError, 'a push that is not text')
  t.same(sessionUnbindScript.decode(2), { removed: 2 })
  t.same(keySessionsScript.args({ op: 'open', ref: 'r', ttlMs: 10, maxSessions: 2 }), ['open', 'r', 10, 2])
  t.same(sessionBindScript.args({ by: '', entry: 'e', held: true }), ['', 'e', 0, 'held'])
})
