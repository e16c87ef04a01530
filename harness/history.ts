import type { HoldMode } from '../src/contract/words.js'

/**
 * Safety checker for lock and semaphore histories recorded by contention tests.
 *
 * Every hold is the interval during which a client BELIEVED it held a lock
 * (from receiving the grant until it sent its release or its validity ran
 * out). A grant's validityMs counts from when the service decided it, which a
 * client only knows to lie after it sent the request: so the window is
 * anchored on the request's send time, and after a long wait in line (which
 * may leave nothing of it) on the send time of a renew made right after the
 * grant (see windows()). Checks, per (namespace, key):
 *
 * - overlap:         two conflicting holds (anything but read+read, and
 *                    permits, which over_limit judges) overlap.
 * - over_limit:      a semaphore's holds ('permit') within their validity
 *                    take more permits at some instant than its limit.
 * - duplicate_fence: two holds carry the same fence.
 * - fence_order:     a hold that certainly came after another carries a
 *                    lower fence. "Certainly after" is decided by two rules
 *                    (see checkFenceOrder) that hold for any correct server.
 * - bad_interval:    non-finite times/fence, or a response before its request.
 *
 * Assumes fences come from a counter that increases with every grant on the
 * key, whatever its mode.
 *
 * Elections: a leader's term is an exclusive hold in the 'elections'
 * namespace whose fence is the term, so the checks above say that no two
 * leaders' windows overlap and that terms strictly increase in grant order.
 * What observers were shown is judged by checkObservers().
 */

export type { HoldMode }

export interface Hold {
  /** Lock key; holds on different keys never conflict. */
  key: string
  /** E.g. 'locks' | 'rwlocks' | 'semaphores' (default 'locks'); different namespaces never conflict. */
  namespace?: string
  mode: HoldMode
  /** mode 'permit': the permits the hold takes, and the semaphore's limit it was granted under. */
  permits?: number
  limit?: number
  /** Who held it (for messages). */
  client: string
  fence: number
  /** Monotonic ms (performance.now()) when the client RECEIVED the grant response. */
  start: number
  /** Monotonic ms: min(time the client SENT its release request, anchor + validityMs). */
  end: number
  /**
   * The validity window the hold began with: `ms` long from `from` (the send time of the acquire, or of
   * the renew that re-anchored it). Optional; windows() counts the holds it cut short.
   */
  validity?: { from: number; ms: number }
  /**
   * Monotonic ms when the client SENT the acquire request. Optional, but when
   * present it enables the strongest fence-order rule (recordGrant sets it).
   */
  requestStartedAt?: number
  /**
   * Monotonic ms by which the service certainly no longer had the hold: its release answered, or the
   * last grant or renew answered plus its TTL. Optional; checkObservers uses it (with the next term's
   * grant) to say when a leader's term had surely ended.
   */
  endedBy?: number
}

export interface Violation {
  kind: 'overlap' | 'over_limit' | 'fence_order' | 'duplicate_fence' | 'bad_interval'
  a: Hold
  b?: Hold
  message: string
}

export interface GrantTimings extends Pick<Hold, 'key' | 'namespace' | 'mode' | 'permits' | 'limit' | 'client' | 'fence'> {
  requestStartedAt: number
  responseAt: number
  validityMs: number
  releaseSentAt: number
  /** A renew sent right after a long wait re-anchors the window: its send time and validity. */
  reanchored?: { sentAt: number; validityMs: number }
}

/** A grant that arrives later than this share of its validity after its anchor counts as cut (lockctl re-anchors then). */
export const CUT_SHARE = 1 / 3

/** How many holds the checker saw whole, cut short by a wait, or not at all (empty: checked for fence order only). */
export interface Windows {
  holds: number
  empty: number
  cut: number
}

/**
 * What an observer of an election was shown at `at`: a leader of `term`, or (leader false) no leader,
 * `term` then being the last term that ended (0: there never was one). `event` is the observe event
 * or 'state' for a long poll's answer; a 'resync' is the current state like any other.
 */
export interface Observation {
  /** Default 'elections'. */
  namespace?: string
  key: string
  observer: string
  /** Monotonic ms when the observer received it. */
  at: number
  event: 'elected' | 'proclaimed' | 'vacant' | 'resync' | 'state'
  term: number
  leader: boolean
}

/** How observers are judged. */
export interface ObserverRules {
  /** How long after a term surely ended an observer may still show it as the leader (the watch timing). */
  staleAfterMs: number
  /** Windows [from, to] (faults and their recovery) during which observers may lag: a deadline falling in one moves to its end. */
  excused?: readonly (readonly [number, number])[]
  /** The true state once faults healed, per `namespace/key`: what every observer of it must end on. */
  final?: ReadonlyMap<string, { term: number; leader: boolean }>
}

export interface ObserverViolation {
  /**
   * regression: a term lower than one shown before, or a leader of a term already shown vacant;
   * stale: a leader shown past staleAfterMs after its term surely ended; final: the last thing shown
   * is not the true final state.
   */
  kind: 'observer_regression' | 'observer_stale' | 'observer_final'
  observer: string
  key: string
  message: string
}

/** The part of a tap `t` that assertSafe needs. */
export interface Assert {
  ok(value: unknown, message: string): unknown
}

const DEFAULT_NAMESPACE = 'locks'
const ELECTIONS = 'elections'
const MAX_REPORTED = 5

type StoredHold = Hold & { namespace: string }
type StoredObservation = Observation & { namespace: string }

export class History {
  readonly #holds: StoredHold[] = []
  readonly #observations: StoredObservation[] = []
  /** per observer and `namespace/key`: when it stopped observing */
  readonly #stopped = new Map<string, number>()

  record(hold: Hold): void {
    this.#holds.push({ ...hold, namespace: hold.namespace ?? DEFAULT_NAMESPACE })
  }

  /** Convenience: build a Hold from timings. */
  recordGrant(args: GrantTimings): void {
    const anchor = args.reanchored
      ? { from: args.reanchored.sentAt, ms: args.reanchored.validityMs }
      : { from: args.requestStartedAt, ms: args.validityMs }
    this.record({
      key: args.key,
      namespace: args.namespace,
      mode: args.mode,
      ...(args.mode === 'permit' ? { permits: args.permits, limit: args.limit } : {}),
      client: args.client,
      fence: args.fence,
      start: args.responseAt,
      end: Math.min(args.releaseSentAt, anchor.from + anchor.ms),
      requestStartedAt: args.requestStartedAt,
      validity: anchor,
    })
  }

  /**
   * Empty: the window ran out before the grant arrived, so overlap and over-limit checks never see the
   * hold. Cut: not empty, but the grant arrived after more than CUT_SHARE of its window had gone (holds
   * recorded without `validity` are never counted as cut).
   */
  windows(): Windows {
    let empty = 0
    let cut = 0
    for (const h of this.#holds) {
      if (isEmpty(h)) empty++
      else if (h.validity && h.start - h.validity.from > h.validity.ms * CUT_SHARE) cut++
    }
    return { holds: this.#holds.length, empty, cut }
  }

  get size(): number {
    return this.#holds.length
  }

  /**
   * Per semaphore (namespace/key): the most permits its holds took at once within their validity,
   * and the limit they were granted under (the smallest, should they differ). Empty without 'permit'
   * holds.
   */
  permitPeaks(): Map<string, { holds: number; maxInUse: number; limit: number }> {
    const peaks = new Map<string, { holds: number; maxInUse: number; limit: number }>()
    for (const [id, group] of groupByKey(this.#holds)) {
      const permitHolds = group.filter((h) => h.mode === 'permit' && intervalProblem(h) === undefined)
      if (permitHolds.length === 0) continue
      let maxInUse = 0
      sweepPermits(permitHolds, (inUse) => {
        maxInUse = Math.max(maxInUse, inUse)
      })
      peaks.set(id.replace('\u0000', '/'), {
        holds: permitHolds.length,
        maxInUse,
        limit: Math.min(...permitHolds.map((h) => h.limit as number)),
      })
    }
    return peaks
  }

  /**
   * The longest time (ms) between one grant's arrival and the next's, over every key: how long the
   * line stood still. 0 with fewer than two holds.
   */
  longestPauseBetweenGrants(): number {
    const starts = this.#holds.map((h) => h.start).sort((a, b) => a - b)
    let longest = 0
    for (let i = 1; i < starts.length; i++) longest = Math.max(longest, (starts[i] as number) - (starts[i - 1] as number))
    return longest
  }

  /** Something an election's observer was shown (record them in the order received). */
  observe(o: Observation): void {
    this.#observations.push({ ...o, namespace: o.namespace ?? ELECTIONS })
  }

  /** The observer stopped watching `key` at `at`: what it showed last it showed until then. */
  observerStopped(observer: string, key: string, at: number, namespace = ELECTIONS): void {
    this.#stopped.set(observerId(observer, namespace, key), at)
  }

  /** How many holds were recorded in `namespace` (an election's: its terms granted). */
  holdsIn(namespace: string): number {
    return this.#holds.filter((h) => h.namespace === namespace).length
  }

  /** The highest fence (an election's term) recorded on `key`, 0 when none. */
  highestFence(key: string, namespace = DEFAULT_NAMESPACE): number {
    let highest = 0
    for (const h of this.#holds) if (h.key === key && h.namespace === namespace) highest = Math.max(highest, h.fence)
    return highest
  }

  get observations(): number {
    return this.#observations.length
  }

  /**
   * Each observer's sequence of terms never goes back, never shows a term as leader again once it
   * showed it vacant, never shows a leader longer than `staleAfterMs` after the term surely ended (its
   * hold's endedBy, or the arrival of a later term's grant), and ends on the true final state.
   */
  checkObservers(rules: ObserverRules): ObserverViolation[] {
    const out: ObserverViolation[] = []
    const endedBy = termEnds(this.#holds)
    const sequences = new Map<string, StoredObservation[]>()
    for (const o of this.#observations) {
      const id = observerId(o.observer, o.namespace, o.key)
      const seq = sequences.get(id)
      if (seq) seq.push(o)
      else sequences.set(id, [o])
    }
    for (const id of this.#stopped.keys()) if (!sequences.has(id)) sequences.set(id, [])
    for (const [id, seq] of sequences) {
      const [observer, namespace, key] = id.split('\u0000') as [string, string, string]
      const where = `${namespace}/${key}`
      const report = (kind: ObserverViolation['kind'], message: string) => out.push({ kind, observer, key: where, message })
      seq.sort((x, y) => x.at - y.at)
      checkRegression(seq, report)
      checkStale(seq, this.#stopped.get(id), endedBy.get(`${namespace}\u0000${key}`), rules, report)
      const final = rules.final?.get(where)
      const last = seq.at(-1)
      if (final && (last?.term !== final.term || last.leader !== final.leader)) {
        report(
          'observer_final',
          `${observer} on ${where} ended on ${last ? shown(last) : 'nothing'}, but the final state is ${shown(final)}`,
        )
      }
    }
    return out
  }

  /** All violations (empty = safe). */
  check(): Violation[] {
    const violations: Violation[] = []
    for (const group of groupByKey(this.#holds).values()) {
      const valid: StoredHold[] = []
      for (const h of group) {
        const problem = intervalProblem(h)
        if (problem) violations.push({ kind: 'bad_interval', a: h, message: `bad interval: ${describe(h)}: ${problem}` })
        else valid.push(h)
      }
      checkDuplicateFences(valid, violations)
      checkOverlaps(valid, violations)
      checkPermits(valid, violations)
      checkFenceOrder(valid, violations)
    }
    return violations
  }

  assertSafe(t: Assert, label = 'history'): void {
    if (this.size === 0) {
      t.ok(false, `${label}: history is empty, so it proves nothing`)
      return
    }
    const violations = this.check()
    let message = `${label}: ${this.size} holds checked, ${violations.length} violations`
    for (const [id, peak] of this.permitPeaks()) message += `; ${id}: at most ${peak.maxInUse} of ${peak.limit} permits in use at once`
    if (violations.length > 0) {
      const shown = violations.slice(0, MAX_REPORTED).map((v) => `  - [${v.kind}] ${v.message}`)
      const more = violations.length > MAX_REPORTED ? [`  ... and ${violations.length - MAX_REPORTED} more`] : []
      message += `\n${[...shown, ...more].join('\n')}`
    }
    t.ok(violations.length === 0, message)
  }
}

function groupByKey(holds: readonly StoredHold[]): Map<string, StoredHold[]> {
  const groups = new Map<string, StoredHold[]>()
  for (const h of holds) {
    const id = `${h.namespace}\u0000${h.key}`
    const group = groups.get(id)
    if (group) group.push(h)
    else groups.set(id, [h])
  }
  return groups
}

function intervalProblem(h: StoredHold): string | undefined {
  if (!Number.isFinite(h.fence)) return 'fence is not a finite number'
  if (!Number.isFinite(h.start) || !Number.isFinite(h.end)) return 'start/end are not finite numbers'
  if (h.requestStartedAt !== undefined) {
    if (!Number.isFinite(h.requestStartedAt)) return 'requestStartedAt is not a finite number'
    if (h.requestStartedAt > h.start) return 'the grant response arrived before the request was sent'
  }
  if (h.mode === 'permit') {
    if (!Number.isInteger(h.permits) || !Number.isInteger(h.limit) || (h.permits as number) < 1)
      return 'permits and limit must be whole numbers, permits at least 1'
    if ((h.permits as number) > (h.limit as number)) return `${h.permits} permits of a semaphore of limit ${h.limit}`
  }
  return undefined
}

/** end <= start: validity ran out before the grant arrived; such a hold overlaps nothing. */
function isEmpty(h: Hold): boolean {
  return h.end <= h.start
}

/**
 * Whether two holds may not overlap at all. Holds of permits are judged together (checkPermits), not
 * pairwise: two of them never conflict as such.
 */
function conflicts(a: Hold, b: Hold): boolean {
  if (a.mode === 'permit' || b.mode === 'permit') return false
  return a.mode !== 'read' || b.mode !== 'read'
}

function checkDuplicateFences(group: StoredHold[], out: Violation[]): void {
  const byFence = new Map<number, StoredHold>()
  for (const h of group) {
    const first = byFence.get(h.fence)
    if (first) {
      out.push({
        kind: 'duplicate_fence',
        a: first,
        b: h,
        message: `duplicate fence ${h.fence} on ${where(h)}: ${describe(first)} and ${describe(h)}`,
      })
    } else {
      byFence.set(h.fence, h)
    }
  }
}

/**
 * Sweep by start, remembering the hold reaching furthest to the right among
 * all holds and among write/exclusive holds. A read conflicts only with the
 * latter; anything else with either. Reports each hold at most once, against
 * the hold it overlaps most to its left.
 */
function checkOverlaps(group: StoredHold[], out: Violation[]): void {
  const holds = group.filter((h) => !isEmpty(h) && h.mode !== 'permit').sort(byStart)
  let furthestAny: StoredHold | undefined
  let furthestWrite: StoredHold | undefined
  for (const b of holds) {
    const a = b.mode === 'read' ? furthestWrite : furthestAny
    if (a && a.end > b.start) {
      out.push({
        kind: 'overlap',
        a,
        b,
        message:
          `overlap on ${where(b)}: ${describe(a)} and ${describe(b)} ` + `both held it for ${ms(Math.min(a.end, b.end) - b.start)} ms`,
      })
    }
    if (!furthestAny || b.end > furthestAny.end) furthestAny = b
    if (b.mode !== 'read' && (!furthestWrite || b.end > furthestWrite.end)) furthestWrite = b
  }
}

/**
 * Calls `visit(inUse, hold)` at each start of a non-empty hold of permits, with the permits that
 * holds take at that instant (this one included). Holds are half-open [start, end): one ending where
 * another starts does not overlap it.
 */
function sweepPermits(
  group: readonly StoredHold[],
  visit: (inUse: number, started: StoredHold, live: ReadonlySet<StoredHold>) => void,
): void {
  const events: { at: number; hold: StoredHold; starts: boolean }[] = []
  for (const h of group) {
    if (h.mode !== 'permit' || isEmpty(h)) continue
    events.push({ at: h.start, hold: h, starts: true }, { at: h.end, hold: h, starts: false })
  }
  // By time; at the same instant, ends before starts.
  events.sort((x, y) => x.at - y.at || Number(x.starts) - Number(y.starts))
  const live = new Set<StoredHold>()
  let inUse = 0
  for (const e of events) {
    if (e.starts) {
      live.add(e.hold)
      inUse += e.hold.permits as number
      visit(inUse, e.hold, live)
    } else {
      live.delete(e.hold)
      inUse -= e.hold.permits as number
    }
  }
}

/**
 * At every instant, the permits of a semaphore's holds within their validity are at most its limit
 * (the smallest limit among the live holds, should they differ). Reported at the start of the hold
 * that went over, naming the holds live then.
 */
function checkPermits(group: StoredHold[], out: Violation[]): void {
  sweepPermits(group, (inUse, b, live) => {
    const limit = Math.min(...[...live].map((h) => h.limit as number))
    if (inUse <= limit) return
    const others = [...live].filter((h) => h !== b)
    out.push({
      kind: 'over_limit',
      a: others[0] ?? b,
      b,
      message:
        `over limit on ${where(b)}: ${inUse} permits in use (limit ${limit}) once ${describe(b)} started, ` +
        `with ${others.map(describe).join(', ')}`,
    })
  })
}

/**
 * b must have a higher fence than a when either:
 *
 * 1. a.start <= b.requestStartedAt: a's grant was issued before b's request
 *    was even sent (any modes, empty holds included).
 * 2. a.end <= b.start, both non-empty and conflicting: had b been granted
 *    first, b's lock was live on the server until b.start, so a was granted
 *    while b held it.
 *
 * Rule 2 is deliberately not applied to read+read or to empty holds: a
 * response delayed in flight can legitimately arrive after a later grant was
 * already released, which would make the rule report a false violation.
 *
 * Each sweep keeps the highest fence seen among holds that qualify as "a";
 * equal fences are left to checkDuplicateFences. At most one violation is
 * reported per b.
 */
function checkFenceOrder(group: StoredHold[], out: Violation[]): void {
  const reported = new Set<StoredHold>()
  const report = (a: StoredHold, b: StoredHold, why: string): void => {
    if (reported.has(b)) return
    reported.add(b)
    out.push({
      kind: 'fence_order',
      a,
      b,
      message: `fence order on ${where(b)}: ${describe(a)} ${why} ${describe(b)}, but has the higher fence`,
    })
  }

  // Rule 1: sweep b by request time, admitting every a that started by then.
  const byStartAll = [...group].sort(byStart)
  const withRequest = group.filter((h) => h.requestStartedAt !== undefined).sort(byRequest)
  let i = 0
  let maxFence: StoredHold | undefined
  for (const b of withRequest) {
    const sent = b.requestStartedAt as number
    for (let a = byStartAll[i]; a && a.start <= sent; a = byStartAll[++i]) {
      if (a !== b && (!maxFence || a.fence > maxFence.fence)) maxFence = a
    }
    if (maxFence && maxFence.fence > b.fence) report(maxFence, b, 'received its grant before the request was sent by')
  }

  // Rule 2: sweep b by start, admitting every non-empty a that ended by then.
  const nonEmpty = group.filter((h) => !isEmpty(h))
  const byEnd = [...nonEmpty].sort((x, y) => x.end - y.end)
  const byStartNonEmpty = nonEmpty.sort(byStart)
  let j = 0
  let maxAny: StoredHold | undefined
  let maxWrite: StoredHold | undefined
  for (const b of byStartNonEmpty) {
    for (let a = byEnd[j]; a && a.end <= b.start; a = byEnd[++j]) {
      if (!maxAny || a.fence > maxAny.fence) maxAny = a
      if (a.mode !== 'read' && (!maxWrite || a.fence > maxWrite.fence)) maxWrite = a
    }
    const a = b.mode === 'read' ? maxWrite : maxAny
    if (a && conflicts(a, b) && a.fence > b.fence) report(a, b, 'released before the grant reached')
  }
}

function byStart(x: Hold, y: Hold): number {
  return x.start - y.start
}

function byRequest(x: Hold, y: Hold): number {
  return (x.requestStartedAt as number) - (y.requestStartedAt as number)
}

function where(h: StoredHold): string {
  return `${h.namespace}/${h.key}`
}

function describe(h: Hold): string {
  const requested = h.requestStartedAt === undefined ? '' : `, requested ${ms(h.requestStartedAt)}`
  const empty = isEmpty(h) ? ' (empty)' : ''
  const mode = h.mode === 'permit' ? `${h.permits} of ${h.limit} permits` : h.mode
  return `${h.client} (${mode}, fence ${h.fence}, held ${ms(h.start)}..${ms(h.end)} ms${empty}${requested})`
}

function ms(n: number): string {
  return n.toFixed(3)
}

function observerId(observer: string, namespace: string, key: string): string {
  return `${observer}\u0000${namespace}\u0000${key}`
}

function shown(o: { term: number; leader: boolean }): string {
  return o.leader ? `term ${o.term}'s leader` : `no leader (after term ${o.term})`
}

/**
 * Per `namespace\u0000key`: by when each term (fence) had surely ended on the service: its hold's
 * endedBy, or the arrival of any later term's grant, whichever is first.
 */
function termEnds(holds: readonly StoredHold[]): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>()
  for (const [id, group] of groupByKey(holds)) {
    const ends = new Map<number, number>()
    // By fence, highest first: the earliest grant arrival among higher fences ends every lower one.
    let laterGrant = Infinity
    for (const h of [...group].sort((x, y) => y.fence - x.fence)) {
      const end = Math.min(h.endedBy ?? Infinity, laterGrant)
      if (Number.isFinite(end)) ends.set(h.fence, Math.min(end, ends.get(h.fence) ?? Infinity))
      laterGrant = Math.min(laterGrant, h.start)
    }
    out.set(id, ends)
  }
  return out
}

function checkRegression(seq: readonly StoredObservation[], report: (kind: 'observer_regression', message: string) => void): void {
  let highest: StoredObservation | undefined
  let vacated = -Infinity // the highest term shown vacant
  for (const o of seq) {
    if (highest && o.term < highest.term) {
      report(
        'observer_regression',
        `at ${ms(o.at)} ${o.observer} was shown ${shown(o)} (${o.event}) after ${shown(highest)} at ${ms(highest.at)}`,
      )
    } else if (o.leader && o.term <= vacated) {
      report('observer_regression', `at ${ms(o.at)} ${o.observer} was shown ${shown(o)} (${o.event}) after it was shown vacant`)
    }
    if (!highest || o.term >= highest.term) highest = o
    if (!o.leader) vacated = Math.max(vacated, o.term)
  }
}

/**
 * An observer showed term T's leader from one observation until its next (or until it stopped): a
 * violation when that lasted past T's sure end + staleAfterMs. A deadline inside an excused window
 * moves to the window's end + staleAfterMs.
 */
function checkStale(
  seq: readonly StoredObservation[],
  stoppedAt: number | undefined,
  ends: ReadonlyMap<number, number> | undefined,
  rules: ObserverRules,
  report: (kind: 'observer_stale', message: string) => void,
): void {
  const excused = [...(rules.excused ?? [])].sort((x, y) => x[0] - y[0])
  seq.forEach((o, i) => {
    const until = seq[i + 1]?.at ?? stoppedAt
    const ended = ends?.get(o.term)
    if (!o.leader || until === undefined || ended === undefined) return
    let deadline = ended + rules.staleAfterMs
    for (const [from, to] of excused) if (from <= deadline && to + rules.staleAfterMs > deadline) deadline = to + rules.staleAfterMs
    if (until > deadline) {
      report(
        'observer_stale',
        `${o.observer} showed ${shown(o)} (${o.event} at ${ms(o.at)}) until ${ms(until)}, but the term had ended by ${ms(ended)}` +
          ` (${ms(until - ended)} ms, allowed ${rules.staleAfterMs})`,
      )
    }
  })
}
