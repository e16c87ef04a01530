/**
 * Turns what a run recorded into verdicts: the history checker's overlaps and fence inversions (and
 * how many holds it saw whole, cut short or not at all), holds lost while their client believed it
 * held them, wrong grants, unexpected answers, late answers, availability during and outside faults,
 * clock-fault detection, and the checks after the last heal. Prints it, and gives it as JSON.
 */
import type { History, Violation, Windows } from '../harness/history.js'
import type { ClockWatch, Detection } from './clock-watch.js'
import type { ElectionsOutcome } from './elections.js'
import type { LostHold, Outcome, Problem, WorkloadStats } from './clients.js'
import { delayBreaches, type DelayBreach } from './delay-check.js'
import { fencedVerdicts, type FencedStats } from './fenced-writers.js'
import { faultKinds } from './faults.js'
import { describeTargets, type FaultRecord } from './nemesis.js'
import type { Options, ServiceSettings } from './options.js'
import type { Scenario } from './scenarios.js'

export interface FinalChecks {
  grantable: { ok: number; failures: string[] }
  replicasAlive: { ok: number; failures: string[] }
  /** how long after the workload the service settled (quarantines and clock probation over) */
  settledAfterMs: number | null
  /** the service's lock_grants_answered_late_total over the replicas (each since its last start): grants answered 503 instead */
  grantsAnsweredLate: number | null
}

interface Availability {
  acquires: number
  unavailable: number
  connectionErrors: number
  /** 503 among acquires that got an answer */
  share503: number | null
  /** when the first 503s were sent (ms after the start) */
  first503At: number[]
}

export interface ChaosReport {
  command: string
  seed: number
  scenario: string
  nodes: number
  replicas: number
  kinds: string[]
  clients: number
  durationMs: number
  serviceEnv: Record<string, string>
  wallMs: number
  grants: Record<string, number>
  grantsTotal: number
  renewed: number
  statuses: WorkloadStats['statuses']
  history: {
    holds: number
    overlaps: number
    /** moments a semaphore's holds took more permits than its limit */
    overLimit: number
    fenceInversions: number
    badIntervals: number
    /** per semaphore: its holds, and the most permits they took at once against its limit */
    permitPeaks: Record<string, { holds: number; maxInUse: number; limit: number }>
    examples: string[]
    /** holds whose window was empty (not checked for overlaps) or cut short by a wait */
    windows: Windows
    /** grants that arrived after a third of their validity, and how many a renew re-anchored */
    reanchor: WorkloadStats['reanchor']
  }
  /** With the election kind: its leaders, overlaps and term inversions, and what its observers were shown. */
  elections?: ElectionsReport
  /** acquires with a fresh token answered 200 */
  wrongGrants: Problem[]
  /**
   * Renews and releases answered 404/409 although sent while the client believed it held the lock:
   * answered after the believed window ended (the request may have reached Redis after the hold
   * expired), during a fault that makes a node faulty (it can take holds or votes away), or neither.
   */
  lost: { total: number; answeredLate: number; duringFaults: number; unexplained: LostHold[] }
  /**
   * Lock-delay (delay-check.ts): holds with a delay never released, and conflicting grants answered
   * before such a delay ended — during a node fault (a node restarted empty forgets delays as it
   * forgets holds) or not.
   */
  lockDelay: { unreleased: number; breaches: number; duringFaults: number; unexplained: string[] }
  availability: { duringFaults: Availability; outsideFaults: Availability }
  /**
   * What each kind of fault cost: acquires (any part of them) within one of its windows, against those
   * outside every fault's window. Latency counts acquires that did not wait in line and got an answer.
   */
  costs: { perFault: Record<string, Cost & { faults: number }>; noFault: Cost }
  /** grants that arrived after their validity (from the acquire's send time): not holds, never acted on */
  lateGrants: number
  /** answers later than their budget from a replica stopped (pause-service) meanwhile, or by no more than its slowed client link's delays: excused, counted */
  lateExcused: number
  faults: (FaultRecord & { detection?: Detection })[]
  /** the fenced-resource writers (chaos/fenced-writers.ts) */
  fenced?: FencedStats & { lines: string[] }
  clockReported: boolean
  unexpected: Problem[]
  late: Problem[]
  final: FinalChecks
  violations: string[]
  notes: string[]
  passed: boolean
}

export interface ElectionsReport {
  /** terms granted (holds in the 'elections' namespace, the final probes included) */
  leaders: number
  overlaps: number
  termInversions: number
  observers: number
  observations: number
  answers: ElectionsOutcome['stats']['answers']
  events: Record<string, number>
  /** per kind: observer_regression, observer_stale, observer_final */
  observerViolations: Record<string, number>
  staleAfterMs: number
  /** the final state of each election, as observers had to end on it */
  final: Record<string, { term: number; leader: boolean }>
  finalFailures: string[]
  examples: string[]
  /** every observer violation's message (at most 100), for the JSON report */
  observerFindings: string[]
}

const EXAMPLES = 5

export interface Cost {
  /** acquires answered (a status) */
  answered: number
  share503: number | null
  /** ms from send to answer, acquires that did not wait in line */
  p50Ms: number | null
  p99Ms: number | null
}

function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}

/** The fault's kind for its cost; a latency fault's link too (a client link and a node link cost differently). */
const costKind = (f: FaultRecord): string => (f.latency ? `${f.kind}/${f.latency.link}` : f.kind)

function costOf(acquires: readonly WorkloadStats['acquires'][number][]): Cost {
  const answered = acquires.filter((a) => typeof a.outcome === 'number')
  const latencies = answered
    .filter((a) => !a.waited)
    .map((a) => a.doneAt - a.at)
    .sort((x, y) => x - y)
  const round = (x: number | null) => (x === null ? null : Math.round(x))
  return {
    answered: answered.length,
    share503: answered.length === 0 ? null : answered.filter((a) => a.outcome === 503).length / answered.length,
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
  }
}

function availability(acquires: readonly { at: number; outcome: Outcome }[]): Availability {
  const answered = acquires.filter((a) => typeof a.outcome === 'number')
  const unavailable = answered.filter((a) => a.outcome === 503)
  return {
    acquires: acquires.length,
    unavailable: unavailable.length,
    connectionErrors: acquires.length - answered.length,
    share503: answered.length === 0 ? null : unavailable.length / answered.length,
    first503At: unavailable.slice(0, 20).map((a) => Math.round(a.at)),
  }
}

/** After a heal the replicas reconnect to a node (ioredis backs off up to 1 s), and sample clocks once a second. */
export const RECOVERY_MS = 1_000

/**
 * A fault's window: from when it was applied until its heal finished, plus the reconnection allowance,
 * plus — for a fault after which the node sits out by design — (MAX_TTL_MS + MAX_LOCK_DELAY_MS) × (1 + DRIFT_FACTOR).
 */
function windows(faults: readonly FaultRecord[], settings: ServiceSettings): [number, number][] {
  const sitOutMs = (settings.maxTtlMs + settings.maxLockDelayMs) * (1 + settings.driftFactor) + RECOVERY_MS
  return faults
    .filter((f) => f.appliedAt !== undefined)
    .map((f) => [f.appliedAt!, (f.healDoneAt ?? f.healedAt ?? Infinity) + RECOVERY_MS + (faultKinds[f.kind].sitsOut ? sitOutMs : 0)])
}

export function buildReport(args: {
  options: Options
  command: string
  scenario: Scenario
  settings: ServiceSettings
  wallMs: number
  stats: WorkloadStats
  history: History
  faults: FaultRecord[]
  watch: ClockWatch
  fenced?: FencedStats
  final: FinalChecks
  elections?: ElectionsOutcome
}): ChaosReport {
  const { options: o, scenario, stats, final } = args
  const found: Violation[] = args.history.check()
  const of = (...kinds: Violation['kind'][]) => found.filter((v) => kinds.includes(v.kind))
  const overlaps = of('overlap')
  const overLimit = of('over_limit')
  const fences = of('fence_order', 'duplicate_fence')
  const bad = of('bad_interval')

  const during = windows(args.faults, args.settings)
  // A request is "during faults" when any part of it (sent → answered) is.
  const inFault = (a: { at: number; doneAt: number }) => during.some(([from, to]) => a.at <= to && a.doneAt >= from)
  const perFault: ChaosReport['costs']['perFault'] = {}
  for (const kind of new Set(args.faults.filter((f) => f.appliedAt !== undefined).map(costKind))) {
    const its = windows(
      args.faults.filter((f) => costKind(f) === kind),
      args.settings,
    )
    const within = stats.acquires.filter((a) => its.some(([from, to]) => a.at <= to && a.doneAt >= from))
    perFault[kind] = { faults: its.length, ...costOf(within) }
  }
  // A replica stopped (pause-service) answers late what it had, or got, while stopped: not a hang of the service.
  const paused = args.faults.filter((f) => f.kind === 'pause-service' && f.appliedAt !== undefined)
  const pausedMeanwhile = (p: Problem) =>
    paused.some((f) => f.replicas.includes(p.replica) && f.appliedAt! <= (p.doneAt ?? Infinity) && (f.healDoneAt ?? Infinity) >= p.at)
  // A slowed client link adds its delays (both ways, jitter included) to the answer: that much late is the link's.
  const slowLinks = args.faults.filter((f) => f.latency?.link === 'client' && f.appliedAt !== undefined)
  const linkDelayMs = (f: FaultRecord) =>
    f.latency!.up.ms + (f.latency!.up.jitterMs ?? 0) + f.latency!.down.ms + (f.latency!.down.jitterMs ?? 0)
  const slowedMeanwhile = (p: Problem) =>
    slowLinks.some(
      (f) =>
        f.replicas.includes(p.replica) &&
        f.appliedAt! <= (p.doneAt ?? Infinity) &&
        (f.healDoneAt ?? Infinity) >= p.at &&
        (p.overMs ?? Infinity) <= linkDelayMs(f),
    )
  const late = stats.late.filter((p) => !pausedMeanwhile(p) && !slowedMeanwhile(p))
  // A hold lost early is excused by a fault that made a node faulty at any time in its life (acquire
  // sent → the answer that it was gone): a node restarted empty or with a clock beyond the allowance
  // drops holds, and a paused or cut-off node holding one leaves a 404 from the others the majority.
  // A replica killed or a clock within the allowance excuses nothing.
  const nodeFaults = windows(
    args.faults.filter((f) => f.faulty.length > 0),
    args.settings,
  )
  const inNodeFault = (l: LostHold) => nodeFaults.some(([from, to]) => l.heldSince <= to && l.doneAt >= from)
  const answeredLate = stats.lost.filter((l) => l.doneAt > l.believedUntil)
  const duringFaults = stats.lost.filter((l) => l.doneAt <= l.believedUntil && inNodeFault(l))
  const unexplained = stats.lost.filter((l) => l.doneAt <= l.believedUntil && !inNodeFault(l))
  const breaches = delayBreaches(stats.delay.ends, stats.delay.grants)
  const breachInFault = (b: DelayBreach) => nodeFaults.some(([from, to]) => b.held.start <= to && b.grant.doneAt >= from)
  const delayUnexplained = breaches
    .filter((b) => !breachInFault(b))
    .map(
      (b) =>
        `${b.held.namespace}/${b.held.key}: a ${b.grant.mode} hold answered at ${secs(b.grant.doneAt)}, within the ${b.held.delayMs} ms ` +
        `lock-delay of a ${b.held.mode} hold that lapsed unreleased at ${secs(b.held.end)} or later`,
    )
  const faults: ChaosReport['faults'] = args.faults.map((f) => (f.clock ? { ...f, detection: args.watch.detection(f) } : f))
  const elections = args.elections ? electionsReport(args.elections, args.history, found, during) : undefined

  const violations: string[] = []
  const notes: string[] = []
  const grantsTotal = Object.values(stats.grants).reduce((a, b) => a + b, 0)
  if (grantsTotal === 0) violations.push('no grants at all: the run proves nothing')
  if (overlaps.length > 0) {
    const line = `${overlaps.length} overlapping conflicting holds`
    if (scenario.exclusionChecked) violations.push(line)
    else notes.push(`${line} (expected beyond Redlock's assumptions: reported, not failed)`)
  }
  if (overLimit.length > 0) {
    const line = `${overLimit.length} times a semaphore's holds took more permits than its limit`
    if (scenario.exclusionChecked) violations.push(line)
    else notes.push(`${line} (expected beyond Redlock's assumptions: reported, not failed)`)
  }
  if (fences.length > 0) violations.push(`${fences.length} fence inversions (a later hold with a lower or equal fence)`)
  if (bad.length > 0) violations.push(`${bad.length} malformed holds recorded (a harness bug)`)
  if (stats.unexpected.length > 0)
    violations.push(
      `${stats.unexpected.length} unexpected answers (5xx other than 503 backend_unavailable/shutting_down, or a status no client expects)`,
    )
  if (stats.wrongGrants.length > 0)
    violations.push(`${stats.wrongGrants.length} acquires with a fresh token answered 200 (a re-grant of a hold the token never had)`)
  if (unexplained.length > 0) {
    const line = `${unexplained.length} holds lost within their validity with no node fault to explain it (a renew or release answered 404/409)`
    if (scenario.exclusionChecked) violations.push(line)
    else notes.push(`${line} (holds may be lost beyond Redlock's assumptions: reported, not failed)`)
  }
  if (delayUnexplained.length > 0) {
    const line = `${delayUnexplained.length} grants within the lock-delay of a hold that lapsed unreleased, with no node fault to explain it`
    if (scenario.exclusionChecked) violations.push(line)
    else notes.push(`${line} (reported, not failed: faults beyond Redlock's assumptions)`)
  }
  if (late.length > 0) violations.push(`${late.length} requests answered late or never (over waitMs + 3 × NODE_TIMEOUT_MS + 2 s)`)
  for (const f of faults) {
    if (f.error) violations.push(`fault #${f.id} ${f.kind}: ${f.error} (the run may be invalid)`)
    if (f.clock?.withinAllowance && f.detection?.status === 'detected') {
      violations.push(`fault #${f.id}: a clock within DRIFT_FACTOR (${f.detail}) on node ${f.nodes.join(',')} was distrusted`)
    }
  }
  if (elections) judgeElections(elections, scenario, violations, notes)
  for (const failure of final.grantable.failures) violations.push(`not grantable after the faults healed: ${failure}`)
  for (const failure of final.replicasAlive.failures) violations.push(`replica not alive at the end: ${failure}`)
  const skipped = faults.filter((f) => f.skipped).length
  if (skipped > 0) notes.push(`${skipped} scheduled faults skipped (targets still busy when due)`)
  if (!args.watch.reported) notes.push('/readyz has no per-node clock field: clock detection n/a')
  const fenced = args.fenced && fencedVerdicts(args.fenced, scenario.exclusionChecked)
  if (fenced) violations.push(...fenced.violations)
  if (fenced) notes.push(...fenced.notes)

  return {
    command: args.command,
    seed: o.seed,
    scenario: o.scenario,
    nodes: o.nodes,
    replicas: o.replicas,
    kinds: o.kinds,
    clients: o.clients,
    durationMs: o.durationMs,
    serviceEnv: o.serviceEnv,
    wallMs: Math.round(args.wallMs),
    grants: stats.grants,
    grantsTotal,
    renewed: stats.renewed,
    statuses: stats.statuses,
    history: {
      holds: args.history.size,
      overlaps: overlaps.length,
      overLimit: overLimit.length,
      fenceInversions: fences.length,
      badIntervals: bad.length,
      permitPeaks: Object.fromEntries(args.history.permitPeaks()),
      examples: [...fences, ...overlaps, ...overLimit, ...bad].slice(0, EXAMPLES).map((v) => `[${v.kind}] ${v.message}`),
      windows: args.history.windows(),
      reanchor: stats.reanchor,
    },
    ...(elections ? { elections } : {}),
    wrongGrants: stats.wrongGrants,
    lost: { total: stats.lost.length, answeredLate: answeredLate.length, duringFaults: duringFaults.length, unexplained },
    lockDelay: {
      unreleased: stats.delay.ends.length,
      breaches: breaches.length,
      duringFaults: breaches.length - delayUnexplained.length,
      unexplained: delayUnexplained,
    },
    availability: {
      duringFaults: availability(stats.acquires.filter(inFault)),
      outsideFaults: availability(stats.acquires.filter((a) => !inFault(a))),
    },
    costs: { perFault, noFault: costOf(stats.acquires.filter((a) => !inFault(a))) },
    lateGrants: stats.lateGrants,
    lateExcused: stats.late.length - late.length,
    faults,
    ...(args.fenced && fenced ? { fenced: { ...args.fenced, lines: fenced.lines } } : {}),
    clockReported: args.watch.reported,
    unexpected: [...stats.unexpected, ...(args.elections?.stats.unexpected ?? [])],
    late,
    final,
    violations,
    notes,
    passed: violations.length === 0,
  }
}

function electionsReport(
  outcome: ElectionsOutcome,
  history: History,
  found: readonly Violation[],
  excused: readonly [number, number][],
): ElectionsReport {
  const inElections = found.filter((v) => (v.b ?? v.a).namespace === 'elections')
  const overlaps = inElections.filter((v) => v.kind === 'overlap')
  const inversions = inElections.filter((v) => v.kind === 'fence_order' || v.kind === 'duplicate_fence')
  const observed = history.checkObservers({ staleAfterMs: outcome.staleAfterMs, excused, final: outcome.final })
  const observerViolations: Record<string, number> = {}
  for (const v of observed) observerViolations[v.kind] = (observerViolations[v.kind] ?? 0) + 1
  return {
    leaders: history.holdsIn('elections'),
    overlaps: overlaps.length,
    termInversions: inversions.length,
    observers: outcome.stats.observers,
    observations: outcome.stats.observations,
    answers: outcome.stats.answers,
    events: outcome.stats.events,
    observerViolations,
    staleAfterMs: outcome.staleAfterMs,
    final: Object.fromEntries(outcome.final),
    finalFailures: outcome.finalFailures,
    examples: [
      ...[...inversions, ...overlaps].map((v) => `[${v.kind}] ${v.message}`),
      ...observed.map((v) => `[${v.kind}] ${v.message}`),
    ].slice(0, EXAMPLES),
    observerFindings: observed.slice(0, 100).map((v) => `[${v.kind}] ${v.message}`),
  }
}

/**
 * Overlaps and term inversions are counted with every other hold's (and judged there). An observer
 * going back or not ending on the final state fails every scenario; one showing a leader too long fails
 * those that check exclusion (beyond the assumptions a term may outlive what its holder was told).
 */
function judgeElections(e: ElectionsReport, scenario: Scenario, violations: string[], notes: string[]): void {
  const regressions = e.observerViolations.observer_regression ?? 0
  const finals = e.observerViolations.observer_final ?? 0
  const stale = e.observerViolations.observer_stale ?? 0
  if (regressions > 0) violations.push(`${regressions} times an observer was shown a term going back (or a vacated term's leader again)`)
  if (finals > 0) violations.push(`${finals} observers did not end on their election's final state`)
  if (stale > 0) {
    const line = `${stale} times an observer showed a leader more than ${e.staleAfterMs} ms after its term ended`
    if (scenario.exclusionChecked) violations.push(line)
    else notes.push(`${line} (beyond Redlock's assumptions: reported, not failed)`)
  }
  for (const failure of e.finalFailures) violations.push(`an election's final state could not be read: ${failure}`)
  if (e.leaders === 0) notes.push('elections: no leader was ever elected')
}

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`)
const secs = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)}s`)

function detectionText(d: Detection | undefined): string {
  if (!d || d.status === 'n/a') return 'detection n/a'
  const per = d.perReplicaMs.map((ms, r) => `replica ${r}: ${ms === null ? 'no' : `${ms} ms`}`).join(', ')
  return `${d.status} (${per})`
}

export function formatReport(r: ChaosReport): string {
  const lines: string[] = []
  const counts = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || '–'
  lines.push(
    '',
    `== chaos report: scenario ${r.scenario}, ${r.nodes} node(s), ${r.replicas} replica(s), kinds ${r.kinds.join(',')}, seed ${r.seed} ==`,
  )
  lines.push(`duration ${secs(r.durationMs)} (wall clock ${secs(r.wallMs)}), ${r.clients} clients`)
  lines.push(`grants: ${r.grantsTotal} (${counts(r.grants)}), renewals: ${r.renewed}`)
  for (const op of ['acquire', 'renew', 'release', 'session', 'proclaim'] as const) {
    if ((op !== 'session' && op !== 'proclaim') || Object.keys(r.statuses[op]).length > 0)
      lines.push(`  ${op.padEnd(7)} ${counts(r.statuses[op])}`)
  }
  lines.push(
    `history: ${r.history.holds} holds, ${r.history.overlaps} overlaps, ${r.history.overLimit} over a semaphore's limit, ${r.history.fenceInversions} fence inversions`,
  )
  for (const [id, peak] of Object.entries(r.history.permitPeaks))
    lines.push(`  ${id}: ${peak.holds} holds, at most ${peak.maxInUse} of ${peak.limit} permits in use at once`)
  for (const e of r.history.examples) lines.push(`  ${e}`)
  const w = r.history.windows
  lines.push(
    `  windows: ${w.empty} of ${w.holds} holds empty (validity ran out before the grant arrived: not checked for overlaps), ${w.cut} cut ` +
      `(arrived after a third of their validity); ${r.history.reanchor.done} of ${r.history.reanchor.needed} slow grants re-anchored by a renew` +
      (Object.keys(r.history.reanchor.failed).length > 0 ? ` (the others: ${counts(r.history.reanchor.failed)})` : ''),
  )
  if (r.elections) {
    const e = r.elections
    const violated = Object.entries(e.observerViolations)
    lines.push(
      `elections: ${e.leaders} leaders, ${e.overlaps} overlaps, ${e.termInversions} term inversions; ${e.observers} observers shown ` +
        `${e.observations} states/events (${counts(e.events)}), ${violated.length === 0 ? 'no observer violations' : `observer violations: ${counts(e.observerViolations)}`}`,
    )
    lines.push(`  observe  long poll ${counts(e.answers.poll)}; stream ${counts(e.answers.stream)}`)
    for (const x of e.examples) lines.push(`  ${x}`)
  }
  lines.push(
    `lost while believed held (renew/release 404/409): ${r.lost.total}: ${r.lost.answeredLate} answered after the window ended, ` +
      `${r.lost.duringFaults} during node faults, ${r.lost.unexplained.length} unexplained; wrong grants (fresh token answered 200): ${r.wrongGrants.length}`,
  )
  const d = r.lockDelay
  lines.push(
    `lock-delay: ${d.unreleased} holds with a delay lapsed unreleased; conflicting grants within a delay: ${d.breaches} ` +
      `(${d.duringFaults} during node faults, ${d.unexplained.length} unexplained)`,
  )
  for (const u of d.unexplained.slice(0, EXAMPLES)) lines.push(`  ${u}`)
  const a = r.availability
  lines.push(
    `availability (a fault lasts until ${RECOVERY_MS / 1000} s after its heal, or the node's quarantine or clock probation ends): 503 share of answered acquires during faults ${pct(a.duringFaults.share503)} (${a.duringFaults.unavailable}/${a.duringFaults.acquires - a.duringFaults.connectionErrors}), ` +
      `outside faults ${pct(a.outsideFaults.share503)} (${a.outsideFaults.unavailable}/${a.outsideFaults.acquires - a.outsideFaults.connectionErrors}); ` +
      `connection errors ${a.duringFaults.connectionErrors} during, ${a.outsideFaults.connectionErrors} outside`,
  )
  const costLine = (c: Cost) =>
    `503 ${pct(c.share503)} of ${c.answered} answered acquires, latency p50 ${c.p50Ms ?? '–'} ms p99 ${c.p99Ms ?? '–'} ms`
  lines.push(`cost per fault (acquires while one of its kind was active; latency: acquires that did not wait):`)
  for (const [kind, c] of Object.entries(r.costs.perFault)) lines.push(`  ${kind.padEnd(19)} ×${String(c.faults).padEnd(3)} ${costLine(c)}`)
  lines.push(`  ${'no fault'.padEnd(24)} ${costLine(r.costs.noFault)}`)
  lines.push(
    `late grants (arrived after sent + validityMs: not holds, never acted on): ${r.lateGrants}; ` +
      `grants the service found too late to answer (released, 503 validity_expired): ${r.final.grantsAnsweredLate ?? 'n/a'}; ` +
      `late answers excused (a replica stopped meanwhile, or late by no more than its slowed client link's delays): ${r.lateExcused}`,
  )
  if (r.fenced) lines.push(...r.fenced.lines)
  lines.push(`faults (${r.faults.filter((f) => f.appliedAt !== undefined).length} applied):`)
  for (const f of r.faults) {
    const when = f.skipped ? `skipped: ${f.skipped}` : `${secs(f.appliedAt)}–${secs(f.healDoneAt ?? f.healedAt)}`
    const clock = f.clock ? `; ${detectionText(f.detection)}` : ''
    lines.push(
      `  #${String(f.id).padEnd(3)} ${f.kind.padEnd(19)} ${describeTargets(f)} ${when}${clock}${f.error ? ` ERROR ${f.error}` : ''}`,
    )
  }
  const settled = r.final.settledAfterMs === null ? 'did not settle' : `settled ${secs(r.final.settledAfterMs)} after the workload`
  lines.push(
    `after the faults (${settled}): ${r.final.grantable.ok} fresh acquires granted, ${r.final.grantable.failures.length} refused; ${r.final.replicasAlive.ok} replicas alive`,
  )
  for (const p of [...r.wrongGrants, ...r.lost.unexplained, ...r.unexpected, ...r.late].slice(0, EXAMPLES))
    lines.push(`  at ${secs(p.at)} replica ${p.replica} ${p.path}: ${p.what}`)
  for (const n of r.notes) lines.push(`note: ${n}`)
  if (r.passed) lines.push('PASS: no violation')
  else for (const v of r.violations) lines.push(`VIOLATION: ${v}`)
  lines.push(`seed ${r.seed}; reproduce: ${r.command}`)
  return lines.join('\n')
}
