import t from 'tap'
import { History, type Hold, type HoldMode, type Observation, type ObserverRules, type Violation } from '../../harness/history.js'

function hold(over: Partial<Hold> & Pick<Hold, 'fence' | 'start' | 'end'>): Hold {
  return { key: 'k', mode: 'exclusive', client: `c${over.fence}`, ...over }
}

function check(...holds: Hold[]): Violation[] {
  const h = new History()
  for (const x of holds) h.record(x)
  return h.check()
}

const kinds = (vs: Violation[]): string[] => vs.map((v) => v.kind)

/** A fake `t` that records what assertSafe reported. */
function fakeT(): { ok(v: unknown, msg?: string): boolean; calls: { value: unknown; message?: string }[] } {
  const calls: { value: unknown; message?: string }[] = []
  return {
    calls,
    ok(value: unknown, message?: string) {
      calls.push({ value, message })
      return Boolean(value)
    },
  }
}

t.test('sequential exclusive holds with increasing fences pass', async (t) => {
  t.same(check(hold({ fence: 1, start: 0, end: 10 }), hold({ fence: 2, start: 10, end: 20 }), hold({ fence: 5, start: 25, end: 30 })), [])
})

t.test('overlapping exclusive holds fail', async (t) => {
  const vs = check(hold({ fence: 1, client: 'alice', start: 0, end: 10 }), hold({ fence: 2, client: 'bob', start: 9, end: 20 }))
  t.same(kinds(vs), ['overlap'])
  const v = vs[0]
  t.equal(v?.a.client, 'alice')
  t.equal(v?.b?.client, 'bob')
  t.match(v?.message, /alice.*fence 1.*0\.000\.\.10\.000.*bob.*fence 2.*9\.000\.\.20\.000.*1\.000 ms/)
})

t.test('a hold nested inside another is caught', async (t) => {
  t.same(kinds(check(hold({ fence: 1, start: 0, end: 100 }), hold({ fence: 2, start: 40, end: 50 }))), ['overlap'])
})

t.test('read/write conflicts', async (t) => {
  const rw = (mode: HoldMode, fence: number, start: number, end: number): Hold => hold({ namespace: 'rwlocks', mode, fence, start, end })
  t.same(check(rw('read', 1, 0, 10), rw('read', 2, 5, 15), rw('read', 3, 6, 7)), [], 'reads may overlap')
  t.same(kinds(check(rw('read', 1, 0, 10), rw('write', 2, 5, 15))), ['overlap'], 'read then overlapping write')
  t.same(kinds(check(rw('write', 1, 0, 10), rw('read', 2, 5, 15))), ['overlap'], 'write then overlapping read')
  t.same(kinds(check(rw('write', 1, 0, 10), rw('write', 2, 5, 15))), ['overlap'], 'write and write')
  t.same(
    kinds(check(rw('write', 1, 0, 100), rw('read', 2, 10, 20), rw('read', 3, 30, 40))),
    ['overlap', 'overlap'],
    'a long write is reported against every read inside it',
  )
  t.same(kinds(check(rw('read', 1, 0, 10), rw('write', 2, 10, 20), rw('read', 3, 20, 30))), [], 'touching is fine')
})

t.test('different keys and namespaces never conflict', async (t) => {
  t.same(check(hold({ key: 'a', fence: 1, start: 0, end: 10 }), hold({ key: 'b', fence: 1, start: 5, end: 15 })), [])
  t.same(
    check(
      hold({ namespace: 'locks', fence: 1, start: 0, end: 10 }),
      hold({ namespace: 'rwlocks', mode: 'write', fence: 1, start: 5, end: 15 }),
    ),
    [],
  )
  t.same(
    kinds(check(hold({ fence: 1, start: 0, end: 10 }), hold({ namespace: 'locks', fence: 2, start: 5, end: 15 }))),
    ['overlap'],
    "an omitted namespace is 'locks'",
  )
})

t.test('fence order', async (t) => {
  const vs = check(hold({ fence: 5, client: 'alice', start: 0, end: 10 }), hold({ fence: 4, client: 'bob', start: 20, end: 30 }))
  t.same(kinds(vs), ['fence_order'], 'a decreasing fence across sequential holds fails')
  t.match(vs[0]?.message, /alice.*fence 5.*bob.*fence 4/)

  t.same(
    kinds(check(hold({ fence: 9, start: 0, end: 10 }), hold({ fence: 3, start: 20, end: 30 }), hold({ fence: 4, start: 40, end: 50 }))),
    ['fence_order', 'fence_order'],
    'every hold after the high fence is reported',
  )

  const rw = (mode: HoldMode, fence: number, start: number, end: number): Hold => hold({ namespace: 'rwlocks', mode, fence, start, end })
  t.same(kinds(check(rw('write', 5, 0, 10), rw('read', 4, 20, 30))), ['fence_order'], 'write then read')
  t.same(kinds(check(rw('read', 5, 0, 10), rw('write', 4, 20, 30))), ['fence_order'], 'read then write')
  t.same(
    check(rw('read', 5, 0, 10), rw('read', 4, 20, 30)),
    [],
    'read then read is not judged by interval alone: a delayed grant response can legitimately look like this',
  )
  t.same(
    kinds(check({ ...rw('read', 5, 0, 10), requestStartedAt: -1 }, { ...rw('read', 4, 20, 30), requestStartedAt: 15 })),
    ['fence_order'],
    'read then read is caught once the later request was sent after the earlier grant arrived',
  )
})

t.test('empty intervals overlap nothing but still count for fences', async (t) => {
  // validity ran out (end) before the grant response arrived (start)
  const empty = hold({ fence: 2, client: 'late', start: 30, end: 12, requestStartedAt: 2 })
  t.same(check(hold({ fence: 1, start: 0, end: 100 }), empty, hold({ fence: 3, start: 100, end: 110 })), [])
  t.same(check(hold({ fence: 1, start: 10, end: 10 }), hold({ fence: 2, start: 0, end: 20 })), [], 'end == start is empty too')
  t.same(kinds(check(empty, hold({ fence: 2, start: 100, end: 110 }))), ['duplicate_fence'])
  t.same(
    kinds(check(empty, hold({ fence: 1, start: 100, end: 110, requestStartedAt: 90 }))),
    ['fence_order'],
    'an empty hold granted before a later request must have the lower fence',
  )
})

t.test('duplicate fences fail', async (t) => {
  const vs = check(hold({ fence: 7, client: 'alice', start: 0, end: 10 }), hold({ fence: 7, client: 'bob', start: 20, end: 30 }))
  t.same(kinds(vs), ['duplicate_fence'], 'reported once, not also as fence_order')
  t.match(vs[0]?.message, /duplicate fence 7 on locks\/k: alice.*bob/)
  t.same(check(hold({ key: 'a', fence: 7, start: 0, end: 10 }), hold({ key: 'b', fence: 7, start: 20, end: 30 })), [], 'per key')
})

t.test('malformed holds are bad_interval', async (t) => {
  t.same(kinds(check(hold({ fence: 1, start: Number.NaN, end: 10 }))), ['bad_interval'])
  t.same(kinds(check(hold({ fence: 1, start: 5, end: 10, requestStartedAt: 6 }))), ['bad_interval'], 'response before request')
})

t.test('recordGrant computes end = min(releaseSentAt, requestStartedAt + validityMs)', async (t) => {
  const base = { key: 'k', mode: 'exclusive' as const, client: 'alice', requestStartedAt: 100, responseAt: 105 }
  const h = new History()
  h.recordGrant({ ...base, fence: 1, validityMs: 50, releaseSentAt: 120 })
  h.recordGrant({ ...base, fence: 2, requestStartedAt: 200, responseAt: 205, validityMs: 50, releaseSentAt: 300 })
  t.equal(h.size, 2)
  const f = fakeT()
  h.assertSafe(f)
  t.equal(f.calls[0]?.value, true)

  // second grant is really [205, 250]: a hold starting at 249 overlaps it, one starting at 250 does not
  const probe = (start: number): Violation[] => {
    const copy = new History()
    copy.recordGrant({ ...base, fence: 1, validityMs: 50, releaseSentAt: 120 })
    copy.recordGrant({ ...base, fence: 2, requestStartedAt: 200, responseAt: 205, validityMs: 50, releaseSentAt: 300 })
    copy.record(hold({ fence: 3, start, end: start + 10 }))
    return copy.check()
  }
  t.same(kinds(probe(249)), ['overlap'], 'validity caps the hold')
  t.same(probe(250), [])
  t.same(kinds(probe(119)), ['overlap', 'fence_order'], 'release caps the first hold at 120')
})

t.test('a waiter whose wait outlasted its validity: empty unless a renew re-anchors its window', async (t) => {
  // Waited 1500 ms for a grant valid 1000 ms from its decision: counted from the request, nothing is left.
  const waiter = { key: 'k', mode: 'exclusive' as const, client: 'waiter', fence: 2, requestStartedAt: 0, responseAt: 1500 }
  const waited = { ...waiter, validityMs: 1000, releaseSentAt: 2000 }
  const intruder = hold({ fence: 3, client: 'intruder', start: 1800, end: 1900 })

  const blind = new History()
  blind.recordGrant(waited)
  blind.record(intruder)
  t.same(blind.check(), [], 'the empty hold is never checked for overlaps')
  t.same(blind.windows(), { holds: 2, empty: 1, cut: 0 }, 'and windows() says so')

  const reanchored = new History()
  reanchored.recordGrant({ ...waited, reanchored: { sentAt: 1510, validityMs: 1000 } })
  reanchored.record(intruder)
  t.same(kinds(reanchored.check()), ['overlap'], 'anchored on the renew sent at 1510, it runs to its release at 2000')
  t.same(reanchored.windows(), { holds: 2, empty: 0, cut: 0 })

  const short = new History()
  short.recordGrant({ ...waited, reanchored: { sentAt: 1510, validityMs: 200 } })
  short.record(intruder)
  t.same(short.check(), [], 'the renew’s validity caps it (1510 + 200 < 1800)')
})

t.test('windows(): empty and cut holds', async (t) => {
  const h = new History()
  const grant = { key: 'k', mode: 'exclusive' as const, client: 'c', releaseSentAt: Infinity }
  h.recordGrant({ ...grant, fence: 1, requestStartedAt: 0, responseAt: 10, validityMs: 900 })
  h.recordGrant({ ...grant, fence: 2, requestStartedAt: 1000, responseAt: 1300, validityMs: 900 })
  h.recordGrant({ ...grant, fence: 3, requestStartedAt: 2000, responseAt: 2301, validityMs: 900 })
  h.recordGrant({ ...grant, fence: 4, requestStartedAt: 3000, responseAt: 3900, validityMs: 900 })
  h.record(hold({ fence: 5, start: 5000, end: 5001 }))
  t.same(
    h.windows(),
    { holds: 5, empty: 1, cut: 1 },
    'arrived after 10 ms and 300 ms of 900: whole; after 301 ms: cut; after 900 ms: empty; no validity recorded: never cut',
  )
})

t.test('assertSafe', async (t) => {
  const empty = fakeT()
  new History().assertSafe(empty, 'nothing')
  t.same(empty.calls.length, 1)
  t.equal(empty.calls[0]?.value, false, 'an empty history fails')
  t.match(empty.calls[0]?.message, /nothing: .*empty/)

  const safe = new History()
  safe.record(hold({ fence: 1, start: 0, end: 1 }))
  const ok = fakeT()
  safe.assertSafe(ok, 'safe run')
  t.same(ok.calls, [{ value: true, message: 'safe run: 1 holds checked, 0 violations' }])

  const bad = new History()
  for (let i = 0; i < 8; i++) bad.record(hold({ fence: i + 1, client: `c${i}`, start: i, end: 100 }))
  const failed = fakeT()
  bad.assertSafe(failed, 'bad run')
  t.equal(failed.calls[0]?.value, false)
  const message = failed.calls[0]?.message ?? ''
  t.match(message, /^bad run: 8 holds checked, 7 violations\n/)
  t.equal(message.match(/\[overlap\]/g)?.length, 5, 'shows the first 5 violations')
  t.match(message, /and 2 more/)

  safe.assertSafe(t, 'accepts a real tap t')
})

/** mulberry32: small seeded PRNG so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const SEED = Number(process.env.HISTORY_SEED ?? Date.now() % 2 ** 31)

/** n sequential exclusive grants on one key, some of them empty (validity ran out in flight). */
function sequentialHolds(n: number, random: () => number): Hold[] {
  const out: Hold[] = []
  let free = 0 // the previous hold is over by then
  let fence = 0
  for (let i = 0; i < n; i++) {
    const requestStartedAt = free - random() * 5 // may be sent while the previous hold is still held
    const responseAt = free + random() * 5
    const validityMs = random() < 0.05 ? random() * (responseAt - requestStartedAt) : 5 + random() * 50
    const releaseSentAt = responseAt + random() * 20
    fence += 1 + Math.floor(random() * 3)
    const end = Math.min(releaseSentAt, requestStartedAt + validityMs)
    out.push({ key: 'k', mode: 'exclusive', client: `c${i}`, fence, start: responseAt, end, requestStartedAt })
    free = Math.max(responseAt, end) + random() * 3
  }
  return out
}

t.test(`randomized: 5,000 sequential holds, then one perturbation (seed ${SEED})`, async (t) => {
  const random = rng(SEED)
  const holds = sequentialHolds(5_000, random)
  const clean = new History()
  for (const h of holds) clean.record(h)
  t.same(clean.check(), [], 'the unperturbed history is safe')

  const nonEmpty = (i: number): boolean => {
    const a = holds[i]
    const b = holds[i + 1]
    return !!a && !!b && a.end > a.start && b.end > b.start
  }
  const pick = (): number => {
    for (;;) {
      const i = Math.floor(random() * (holds.length - 2))
      if (nonEmpty(i)) return i
    }
  }
  const perturbed = (i: number, change: (a: Hold, b: Hold) => void): Violation[] => {
    const copy = holds.map((h) => ({ ...h }))
    change(copy[i] as Hold, copy[i + 1] as Hold)
    const h = new History()
    for (const x of copy) h.record(x)
    return h.check()
  }

  for (let round = 0; round < 20; round++) {
    const i = pick()
    const a = holds[i] as Hold
    const b = holds[i + 1] as Hold

    const overlap = perturbed(i, (x, y) => {
      x.end = (y.start + y.end) / 2
    })
    t.same(
      overlap.map((v) => [v.kind, v.a.client, v.b?.client]),
      [['overlap', a.client, b.client]],
      `overlap at ${i}`,
    )

    const swapped = perturbed(i, (x, y) => {
      ;[x.fence, y.fence] = [y.fence, x.fence]
    })
    t.same(
      swapped.map((v) => [v.kind, v.a.client, v.b?.client]),
      [['fence_order', a.client, b.client]],
      `fence swap at ${i}`,
    )

    const duplicate = perturbed(i, (x, y) => {
      y.fence = x.fence
    })
    t.same(
      duplicate.map((v) => [v.kind, v.a.client, v.b?.client]),
      [['duplicate_fence', a.client, b.client]],
      `duplicate at ${i}`,
    )
  }
})

t.test(`randomized: mixed readers and writers on several keys are safe (seed ${SEED})`, async (t) => {
  const random = rng(SEED + 1)
  const history = new History()
  for (const key of ['a', 'b', 'c']) {
    let free = 0
    let fence = 0
    for (let phase = 0; phase < 1_000; phase++) {
      const readers = random() < 0.5 ? 0 : 1 + Math.floor(random() * 4)
      const grants: { mode: HoldMode; start: number; end: number }[] = []
      if (readers === 0) {
        const start = free + random() * 3
        grants.push({ mode: random() < 0.5 ? 'write' : 'exclusive', start, end: start + random() * 10 })
      } else {
        for (let r = 0; r < readers; r++) {
          const start = free + random() * 10
          grants.push({ mode: 'read', start, end: start + random() * 10 })
        }
      }
      // fences follow grant order, and grants arrive in start order
      grants.sort((x, y) => x.start - y.start)
      for (const g of grants) {
        history.record({ key, namespace: 'rwlocks', client: `${key}${phase}`, fence: ++fence, requestStartedAt: free, ...g })
      }
      free = Math.max(...grants.map((g) => g.end))
    }
  }
  history.assertSafe(t, 'mixed')

  // turning one read inside a concurrent batch into a write must be caught
  const batch = new History()
  batch.record({ key: 'k', namespace: 'rwlocks', mode: 'read', client: 'r1', fence: 1, start: 0, end: 10 })
  batch.record({ key: 'k', namespace: 'rwlocks', mode: 'write', client: 'w', fence: 2, start: 5, end: 15 })
  t.same(kinds(batch.check()), ['overlap'])
})

t.test('100,000 holds are checked quickly', async (t) => {
  const holds = sequentialHolds(100_000, rng(SEED + 2))
  const h = new History()
  for (const x of holds) h.record(x)
  const started = performance.now()
  const vs = h.check()
  const took = performance.now() - started
  t.same(vs, [])
  t.ok(took < 5_000, `checked in ${took.toFixed(0)} ms`)
})

// ── semaphores ───────────────────────────────────────────────────────────────────────────────────

function permit(fence: number, permits: number, start: number, end: number, over: Partial<Hold> = {}): Hold {
  return { key: 's', namespace: 'semaphores', mode: 'permit', client: `p${fence}`, fence, permits, limit: 4, start, end, ...over }
}

t.test('semaphore: holds may overlap while their permits fit the limit', async (t) => {
  t.same(check(permit(1, 1, 0, 10), permit(2, 1, 1, 10), permit(3, 1, 2, 10), permit(4, 1, 3, 10)), [], 'four single permits of four')
  t.same(check(permit(1, 3, 0, 10), permit(2, 1, 5, 15), permit(3, 3, 10, 20)), [], 'weighted: 3 + 1, then 1 + 3 (touching is fine)')
  t.same(check(permit(1, 4, 0, 10), permit(2, 4, 10, 20)), [], 'the whole semaphore, one after the other')
})

t.test('semaphore: more permits than the limit at one instant is over_limit', async (t) => {
  const vs = check(
    permit(1, 2, 0, 10, { client: 'alice' }),
    permit(2, 2, 1, 10, { client: 'bob' }),
    permit(3, 1, 9, 20, { client: 'carol' }),
  )
  t.same(kinds(vs), ['over_limit'])
  t.equal(vs[0]?.b?.client, 'carol', 'reported at the start of the hold that went over')
  t.match(vs[0]?.message, /5 permits in use \(limit 4\).*carol \(1 of 4 permits.*alice.*bob/)
  t.same(kinds(check(permit(1, 4, 0, 10), permit(2, 1, 9.999, 20))), ['over_limit'], 'a hair of overlap is enough')
  t.same(check(permit(1, 4, 0, 10), permit(2, 1, 20, 10)), [], 'an empty hold (validity ran out in flight) takes nothing')
  t.same(
    kinds(check(permit(1, 2, 0, 10, { limit: 2 }), permit(2, 1, 5, 15, { limit: 4 }))),
    ['over_limit'],
    'holds that disagree on the limit are held to the smaller one',
  )
  t.same(check(permit(1, 2, 0, 10), { ...permit(2, 4, 0, 10), key: 't' }), [], 'per key')
  t.same(check(permit(1, 4, 0, 10), { ...permit(2, 4, 0, 10), namespace: 'other' }), [], 'per namespace')
})

t.test('semaphore: fences strictly increase per key, across all its holds', async (t) => {
  t.same(kinds(check(permit(5, 1, 0, 10), permit(5, 1, 1, 10))), ['duplicate_fence'])
  t.same(
    kinds(check(permit(5, 1, 0, 10), { ...permit(4, 1, 20, 30), requestStartedAt: 15 })),
    ['fence_order'],
    'a hold requested after another was granted carries the higher fence',
  )
  t.same(
    check(permit(5, 1, 0, 10), permit(4, 1, 20, 30)),
    [],
    'without the request time, as for read holds, a delayed answer may look like this',
  )
})

t.test('semaphore: malformed holds are bad_interval', async (t) => {
  t.same(kinds(check(permit(1, 5, 0, 10))), ['bad_interval'], 'more permits than the limit in one hold')
  t.same(kinds(check(permit(1, 0, 0, 10))), ['bad_interval'], 'no permits')
  t.same(kinds(check({ ...permit(1, 1, 0, 10), limit: undefined })), ['bad_interval'], 'no limit')
})

t.test('semaphore: permitPeaks and assertSafe report the most permits in use at once', async (t) => {
  const h = new History()
  for (const x of [permit(1, 1, 0, 10), permit(2, 2, 1, 10), permit(3, 1, 10, 20)]) h.record(x)
  t.same([...h.permitPeaks()], [['semaphores/s', { holds: 3, maxInUse: 3, limit: 4 }]])
  const f = fakeT()
  h.assertSafe(f, 'sem')
  t.same(f.calls, [{ value: true, message: 'sem: 3 holds checked, 0 violations; semaphores/s: at most 3 of 4 permits in use at once' }])
  t.same([...new History().permitPeaks()], [], 'nothing without permit holds')
})

/** A semaphore's history as a correct server makes it: FIFO, weighted, each hold released or lapsing at random. */
function semaphoreHolds(n: number, limit: number, random: () => number): Hold[] {
  const out: Hold[] = []
  const live: { end: number; permits: number }[] = []
  let now = 0
  let fence = 0
  for (let i = 0; i < n; i++) {
    const permits = 1 + Math.floor(random() * Math.min(limit, 3))
    // Wait until enough of the live holds have ended.
    live.sort((a, b) => a.end - b.end)
    let inUse = live.reduce((s, h) => s + h.permits, 0)
    while (inUse + permits > limit) {
      const first = live.shift() as { end: number; permits: number }
      now = Math.max(now, first.end)
      inUse -= first.permits
    }
    const requestStartedAt = now - random() * 3
    const start = now + random() * 2
    const end = start + random() * 30
    live.push({ end, permits })
    out.push({
      key: 'sem',
      namespace: 'semaphores',
      mode: 'permit',
      client: `c${i}`,
      fence: (fence += 1 + Math.floor(random() * 2)),
      permits,
      limit,
      start,
      end,
      requestStartedAt,
    })
    now = start + random() * 2
  }
  return out
}

t.test(
  `randomized: 5,000 holds of a semaphore of limit 4 are safe; one extra hold at the busiest instant is caught (seed ${SEED})`,
  async (t) => {
    const random = rng(SEED + 3)
    const holds = semaphoreHolds(5_000, 4, random)
    const clean = new History()
    for (const h of holds) clean.record(h)
    t.same(clean.check(), [], 'the unperturbed history is safe')
    const peak = clean.permitPeaks().get('semaphores/sem')
    t.ok(peak && peak.maxInUse <= 4 && peak.maxInUse >= 3, `busy: up to ${peak?.maxInUse} of 4 permits at once`)

    for (let round = 0; round < 20; round++) {
      // A hold of one permit inside a random hold, when that hold starts: over the limit only if
      // every permit was taken right then.
      const i = Math.floor(random() * holds.length)
      const at = holds[i] as Hold
      const inUseThen = holds
        .filter((h) => h.start <= at.start && h.end > at.start && h.end > h.start)
        .reduce((s, h) => s + (h.permits as number), 0)
      const extra: Hold = {
        ...at,
        client: 'intruder',
        fence: at.fence + 0.5,
        permits: 1,
        start: at.start,
        end: at.start + 0.001,
        requestStartedAt: undefined,
      }
      const h = new History()
      for (const x of [...holds, extra]) h.record(x)
      const found = kinds(h.check())
      if (inUseThen + 1 > 4)
        t.same(found, ['over_limit'], `round ${round}: ${inUseThen} in use at ${at.client}'s start: the intruder is caught`)
      else t.same(found, [], `round ${round}: ${inUseThen} in use at ${at.client}'s start: the intruder fits`)
    }
  },
)

t.test('the longest pause between grants, over every key', async (t) => {
  const h = new History()
  t.equal(h.longestPauseBetweenGrants(), 0, 'no holds')
  h.record(hold({ key: 'a', fence: 1, start: 100, end: 110 }))
  t.equal(h.longestPauseBetweenGrants(), 0, 'one hold')
  h.record(hold({ key: 'b', fence: 1, start: 500, end: 510 }))
  h.record(hold({ key: 'a', fence: 2, start: 200, end: 210 }))
  t.equal(h.longestPauseBetweenGrants(), 300, 'from 200 to 500, whatever the order they were recorded in')
})

/** A leader's term as the checker sees it: an exclusive hold in 'elections' whose fence is the term. */
function term(n: number, start: number, end: number, more: Partial<Hold> = {}): Hold {
  return {
    key: 'e',
    namespace: 'elections',
    mode: 'exclusive',
    client: `leader${n}`,
    fence: n,
    start,
    end,
    requestStartedAt: start - 1,
    ...more,
  }
}

/** An election history: terms 1..3 one after another, ended by their release (endedBy) at 100, 200, 300. */
function election(): History {
  const h = new History()
  h.record(term(1, 0, 99, { endedBy: 100 }))
  h.record(term(2, 110, 199, { endedBy: 200 }))
  h.record(term(3, 210, 299, { endedBy: 300 }))
  return h
}

type Shown = Pick<Observation, 'at' | 'term' | 'leader'> & Partial<Observation>
const observe = (h: History, observer: string, ...shown: Shown[]): void => {
  for (const s of shown) h.observe({ key: 'e', observer, event: s.leader ? 'elected' : 'vacant', ...s })
}
/** o1 follows the election faithfully, each change within 10 ms. */
function faithful(h: History): void {
  observe(
    h,
    'o1',
    { at: 5, term: 1, leader: true },
    { at: 105, term: 1, leader: false },
    { at: 115, term: 2, leader: true },
    { at: 205, term: 2, leader: false },
    { at: 215, term: 3, leader: true },
    { at: 305, term: 3, leader: false },
  )
  h.observerStopped('o1', 'e', 1000)
}
const RULES = { staleAfterMs: 50, final: new Map([['elections/e', { term: 3, leader: false }]]) }
const observerKinds = (h: History, rules: ObserverRules = RULES) => h.checkObservers(rules).map((v) => v.kind)

t.test('elections: a faithful history and observer pass', async (t) => {
  const h = election()
  faithful(h)
  t.same(h.check(), [], 'leaders one after another, terms rising')
  t.same(h.checkObservers(RULES), [], 'the observer followed every change in time and ended on the final state')
  t.equal(h.observations, 6)
})

t.test('elections: two leaders whose windows overlap fail', async (t) => {
  const h = election()
  h.record(term(4, 250, 350, { client: 'usurper' }))
  const vs = h.check()
  t.same(kinds(vs), ['overlap'])
  t.match(vs[0]?.message, /overlap on elections\/e: leader3 .*usurper/)
})

t.test('elections: a term lower than one granted before it fails', async (t) => {
  const h = election()
  h.record(term(2, 400, 450, { client: 'late', endedBy: 450 }))
  t.same(kinds(h.check()), ['duplicate_fence', 'fence_order'], 'the same term twice, and after term 3')
  const inverted = election()
  inverted.record(term(1, 400, 450, { fence: 0, client: 'back' }))
  t.same(kinds(inverted.check()), ['fence_order'], 'a term granted after term 3 with a lower number')
  const vs = inverted.check()
  t.match(vs[0]?.message, /leader3 .*fence 3.*back .*fence 0/)
})

t.test('elections: an observer whose term goes back fails', async (t) => {
  const h = election()
  faithful(h)
  observe(h, 'o2', { at: 120, term: 2, leader: true }, { at: 130, term: 1, leader: true }, { at: 305, term: 3, leader: false })
  h.observerStopped('o2', 'e', 1000)
  const vs = h.checkObservers(RULES)
  t.same(
    vs.map((v) => [v.kind, v.observer]),
    [
      ['observer_regression', 'o2'],
      ['observer_stale', 'o2'],
    ],
    'and term 1 (ended at 100) was shown until 305',
  )
  t.match(vs[0]?.message, /o2 was shown term 1's leader \(elected\) after term 2's leader/)

  const revived = election()
  observe(revived, 'o3', { at: 5, term: 1, leader: true }, { at: 105, term: 1, leader: false }, { at: 106, term: 1, leader: true })
  observe(revived, 'o3', { at: 305, term: 3, leader: false })
  t.same(observerKinds(revived), ['observer_regression', 'observer_stale'], 'a term shown as leader again after it was shown vacant')

  const resync = election()
  observe(
    resync,
    'o4',
    { at: 5, term: 1, leader: true },
    { at: 250, term: 3, leader: true, event: 'resync' },
    { at: 305, term: 3, leader: false },
  )
  resync.observerStopped('o4', 'e', 1000)
  t.same(observerKinds(resync), ['observer_stale'], 'a resync may skip terms (it is not a regression), but term 1 was shown too long')
  const prompt = election()
  observe(
    prompt,
    'o5',
    { at: 5, term: 1, leader: true },
    { at: 130, term: 2, leader: true, event: 'resync' },
    { at: 240, term: 3, leader: true, event: 'resync' },
    { at: 305, term: 3, leader: false },
  )
  t.same(observerKinds(prompt), [], 'resyncs in time that skip vacancies are fine')
})

t.test('elections: an observer left showing an ended term fails', async (t) => {
  const h = election()
  observe(h, 'o1', { at: 5, term: 1, leader: true }, { at: 215, term: 3, leader: true }, { at: 305, term: 3, leader: false })
  const vs = h.checkObservers(RULES)
  t.same(
    vs.map((v) => v.kind),
    ['observer_stale'],
    'term 1 ended at 100 (released) and was still shown at 215',
  )
  t.match(vs[0]?.message, /o1 showed term 1's leader \(elected at 5\.000\) until 215\.000, but the term had ended by 100\.000/)

  const byNextGrant = new History()
  byNextGrant.record(term(1, 0, 99)) // abandoned: no endedBy, so only the next grant bounds it
  byNextGrant.record(term(2, 400, 450, { endedBy: 460 }))
  observe(byNextGrant, 'o1', { at: 5, term: 1, leader: true }, { at: 430, term: 2, leader: true }, { at: 470, term: 2, leader: false })
  const final = { staleAfterMs: 20, final: new Map([['elections/e', { term: 2, leader: false }]]) }
  t.same(observerKinds(byNextGrant, final), ['observer_stale'], 'term 2 arrived at 400: term 1 had ended by then')
  t.same(observerKinds(byNextGrant, { ...final, staleAfterMs: 40 }), [], 'within the watch timing')
  t.same(
    observerKinds(byNextGrant, { ...final, excused: [[390, 415]] }),
    [],
    'a fault window around the deadline moves it to the window end + staleAfterMs',
  )

  const stopped = election()
  observe(stopped, 'o1', { at: 215, term: 3, leader: true })
  stopped.observerStopped('o1', 'e', 400)
  t.same(observerKinds(stopped, { staleAfterMs: 50 }), ['observer_stale'], 'shown until it stopped, long after term 3 ended at 300')
  t.same(observerKinds(stopped), ['observer_stale', 'observer_final'], 'and it never saw the final vacancy')
})

t.test('elections: every observer must end on the true final state', async (t) => {
  const h = election()
  faithful(h)
  t.same(observerKinds(h, { staleAfterMs: 50, final: new Map([['elections/e', { term: 4, leader: true }]]) }), ['observer_final'])
  const silent = election()
  silent.observerStopped('quiet', 'e', 1000)
  const vs = silent.checkObservers(RULES)
  t.same(
    vs.map((v) => v.kind),
    ['observer_final'],
  )
  t.match(vs[0]?.message, /quiet on elections\/e ended on nothing, but the final state is no leader \(after term 3\)/)
  t.same(observerKinds(h, { staleAfterMs: 50, final: new Map([['elections/other', { term: 1, leader: true }]]) }), [], 'per election')
})
