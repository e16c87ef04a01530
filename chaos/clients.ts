/**
 * The workload: contending clients on a few keys per hold kind, each request to a random replica.
 * Every hold is recorded in the history checker as the interval the client believed it held the
 * lock: [grant received, min(release sent, anchor + validityMs)]. The anchor is the acquire's send
 * time; a grant that arrives after a third of its validity (a long wait in line) is renewed at once and
 * anchored on that renew's send time instead, as lockctl does; a successful renew moves the end to renew
 * sent + its validityMs. Clients use short TTLs; some wait in line, some renew, some overstay their
 * validity before releasing, some never release. A renew or release answered 404/409 although sent
 * while the client believed it held the lock is recorded as lost (the report judges it), an acquire
 * with a fresh token answered 200 as a wrong grant.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { CUT_SHARE, type History } from '../harness/history.js'
import { request, RequestTimeout, type HttpResult } from '../harness/http.js'
import type { DelayedEnd, GrantSeen } from './delay-check.js'
import { MAX_CHAOS_LOCK_DELAY_MS, withLockDelay, type HoldKind, type HoldSpec } from './kinds/index.js'
import type { ServiceSettings } from './options.js'
import { stream, type Rng } from './prng.js'

/** 'session': opening, keeping alive and closing the sessions of session-bound holds; 'proclaim': a leader's new value. */
export type Op = 'acquire' | 'renew' | 'release' | 'session' | 'proclaim'
/** An HTTP status, or what happened instead of one. */
export type Outcome = number | 'connection-error' | 'timeout'

export interface Problem {
  at: number
  /** 'observe': an election's observer (chaos/observers.ts) */
  op: Op | 'observe'
  path: string
  replica: number
  what: string
  /** ms after the start: when the answer came (late answers: to excuse one from a replica that was stopped meanwhile) */
  doneAt?: number
  /** late answers: by how much the budget was missed (Infinity: no answer) */
  overMs?: number
}

/** A renew or release answered 404/409 although sent while the client believed it held the lock. */
export interface LostHold extends Problem {
  /** ms after the start: when the answer came, when the hold's acquire was sent, and when its window ended */
  doneAt: number
  heldSince: number
  believedUntil: number
}

export interface WorkloadStats {
  /** per op, per status (or outcome) */
  statuses: Record<Op, Record<string, number>>
  /** grants per kind and mode, e.g. "exclusive", "rw/read" */
  grants: Record<string, number>
  renewed: number
  /** acquires: sent and answered (ms after the start), outcome and whether it waited in line, for availability and latency */
  acquires: { at: number; doneAt: number; outcome: Outcome; waited: boolean }[]
  /** grants that arrived after their validity (counted from the acquire's send time): not holds, never acted on */
  lateGrants: number
  /** 5xx other than 503 backend_unavailable / shutting_down, and statuses no client expects */
  unexpected: Problem[]
  /** answers later than waitMs + the node budget, and requests never answered */
  late: Problem[]
  /** acquires with a token never used before answered 200 (a re-grant): recorded as holds, and wrong */
  wrongGrants: Problem[]
  lost: LostHold[]
  /** grants that arrived after a third of their validity, how many of those a renew re-anchored, and the other renews' answers */
  reanchor: { needed: number; done: number; failed: Record<string, number> }
  /** for the lock-delay check (delay-check.ts): every grant, and the holds with a delay never released */
  delay: { grants: GrantSeen[]; ends: DelayedEnd[] }
}

export interface WorkloadOptions {
  seed: number
  clients: number
  kinds: readonly HoldKind[]
  keysPerKind: number
  durationMs: number
  settings: ServiceSettings
  /** the current URL of replica r (its last one while it is down) */
  replicaUrl: (r: number) => string
  replicas: number
  history: History
  startedAt: number
}

const EXPECTED: Record<Op, readonly number[]> = {
  acquire: [200, 201, 409, 429, 503],
  renew: [200, 404, 409, 503],
  release: [200, 404, 409, 503],
  session: [200, 201, 404, 503],
  proclaim: [200, 404, 409, 503],
}
const ALLOWED_503 = ['backend_unavailable', 'shutting_down']
const SLACK_MS = 2_000
/** A late answer is still awaited this much longer, to tell "late" from "never". */
const HANG_MS = 5_000
const MAX_ITERATIONS = 100_000
const PROBE_TRIES = 3

type Behaviour = 'quick' | 'renew' | 'overstay' | 'abandon'

export function keysOf(kind: HoldKind, perKind: number): string[] {
  return Array.from({ length: perKind }, (_, i) => `chaos-${kind.name}-${i}`)
}

/** A token unique to this client and attempt (16–128 of A-Z a-z 0-9 _ -). */
const tokenOf = (client: number, attempt: number) => `chaos-c${client}-a${attempt}-`.padEnd(24, 'x')

export async function runWorkload(o: WorkloadOptions): Promise<WorkloadStats> {
  const stats: WorkloadStats = {
    statuses: { acquire: {}, renew: {}, release: {}, session: {}, proclaim: {} },
    grants: {},
    renewed: 0,
    acquires: [],
    unexpected: [],
    late: [],
    wrongGrants: [],
    lost: [],
    reanchor: { needed: 0, done: 0, failed: {} },
    delay: { grants: [], ends: [] },
    lateGrants: 0,
  }
  const budgetMs = (waitMs: number) => waitMs + 3 * o.settings.nodeTimeoutMs + SLACK_MS
  const deadline = o.startedAt + o.durationMs
  const ttlMax = Math.min(1_500, o.settings.maxTtlMs)
  const waitMax = Math.min(2_500, o.settings.maxWaitMs)

  /** One request, timed against its budget; every outcome is counted. */
  const call = async (rng: Rng, op: Op, method: string, path: string, token: string, waitMs = 0, body?: object) => {
    const replica = rng.int(0, o.replicas - 1)
    const sentAt = performance.now()
    let res: HttpResult | undefined
    let outcome: Outcome
    try {
      res = await request(o.replicaUrl(replica), method, path, { token, body, timeoutMs: budgetMs(waitMs) + HANG_MS })
      outcome = res.status
    } catch (err) {
      outcome = err instanceof RequestTimeout ? 'timeout' : 'connection-error'
    }
    const doneAt = performance.now()
    const at = sentAt - o.startedAt
    // A 503 is counted with its reason (no_majority, validity_expired, …): they tell faults apart.
    // So is a 409 a lock-delay answered (a refusal like lock_held, counted apart to show the delays at work).
    const label =
      res?.status === 503 && res.body.reason !== undefined
        ? `503 ${String(res.body.reason)}`
        : res?.status === 409 && res.body.error === 'lock_delayed'
          ? '409 lock_delayed'
          : String(outcome)
    stats.statuses[op][label] = (stats.statuses[op][label] ?? 0) + 1
    if (op === 'acquire') stats.acquires.push({ at, doneAt: doneAt - o.startedAt, outcome, waited: waitMs > 0 })
    const problem = (what: string) => ({ at, op, path: `${method} ${path}`, replica, what, doneAt: doneAt - o.startedAt })
    if (outcome === 'timeout') stats.late.push({ ...problem(`no answer within ${budgetMs(waitMs) + HANG_MS} ms`), overMs: Infinity })
    else if (outcome !== 'connection-error' && doneAt - sentAt > budgetMs(waitMs)) {
      const overMs = doneAt - sentAt - budgetMs(waitMs)
      stats.late.push({ ...problem(`${outcome} after ${(doneAt - sentAt).toFixed(0)} ms (budget ${budgetMs(waitMs)} ms)`), overMs })
    }
    if (res && !isExpected(op, res)) stats.unexpected.push(problem(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`))
    if (op === 'acquire' && res?.status === 200) stats.wrongGrants.push(problem(`200 ${JSON.stringify(res.body).slice(0, 300)}`))
    return { res, sentAt, doneAt, replica }
  }
  type Call = Awaited<ReturnType<typeof call>>

  /**
   * A renew or release answered "not held" (404, 409, or a keepalive that no longer lists the hold) is
   * recorded when it was sent before `end`, the end of the window the client believed it had.
   */
  const noteIfLost = (c: Call, end: number, heldSince: number, op: Op, path: string, gone: boolean) => {
    if (!gone || c.sentAt >= end) return
    stats.lost.push({
      at: c.sentAt - o.startedAt,
      doneAt: c.doneAt - o.startedAt,
      heldSince: heldSince - o.startedAt,
      believedUntil: end - o.startedAt,
      op,
      path,
      replica: c.replica,
      what: `${c.res?.status} ${JSON.stringify(c.res?.body).slice(0, 200)}`,
    })
  }
  const notHeld = (c: Call) => c.res?.status === 404 || c.res?.status === 409

  /** After a grant: keep the hold the way `behaviour` says, record it, release it (unless abandoned). */
  const holdAndRelease = async (g: {
    rng: Rng
    name: string
    kind: string
    spec: HoldSpec
    token: string
    behaviour: Behaviour
    ttlMs: number
    waitMs: number
    grant: HttpResult
    sentAt: number
    doneAt: number
    replica: number
    /** a session-bound hold: its session's id */
    sessionId?: string
  }) => {
    const { rng, spec, token, behaviour } = g
    const label = spec.mode === 'exclusive' ? g.kind : spec.mode === 'permit' ? `${g.kind}/${spec.permits}` : `${g.kind}/${spec.mode}`
    stats.grants[label] = (stats.grants[label] ?? 0) + 1
    const fence = fenceOf(spec, g.grant)
    const validityMs = g.grant.body.validityMs as number
    // By when the service surely no longer has the hold: every answer (or failure) of a request that
    // may have extended it, plus the lease it asked for; a release answered sooner ends it then.
    let leaseEnd = g.doneAt + (g.grant.body.ttlMs as number)
    const extended = (c: Call, leaseMs: number) => (leaseEnd = Math.max(leaseEnd, c.doneAt + leaseMs))
    // The window the hold begins with, and where the client believes it ends.
    let anchor = { from: g.sentAt, ms: validityMs }
    let end = g.sentAt + validityMs
    // For the checker's messages: who, through which replica, what it was told.
    let story = `${g.name} via r${g.replica} ttl ${g.ttlMs} wait ${g.waitMs} validity ${validityMs}`

    /** Renews the hold (its session's keepalive when bound): the new window from the renew's send time, if kept. */
    const renewHold = async (body?: { ttlMs: number }) => {
      const renew = g.sessionId
        ? await call(rng, 'session', 'PUT', `/sessions/${g.sessionId}/keepalive`, '')
        : await call(rng, 'renew', 'PUT', `${spec.path}/renew`, token, 0, body)
      extended(renew, Math.max(g.ttlMs, body?.ttlMs ?? 0, (renew.res?.body.ttlMs as number | undefined) ?? 0))
      const kept =
        renew.res?.status === 200 &&
        (!g.sessionId || (renew.res.body.holds as { key: string }[] | undefined)?.some((h) => h.key === spec.key))
      noteIfLost(
        renew,
        end,
        g.sentAt,
        g.sessionId ? 'session' : 'renew',
        g.sessionId ? 'keepalive' : `PUT ${spec.path}/renew`,
        !kept && (notHeld(renew) || renew.res?.status === 200),
      )
      if (!kept || !renew.res) {
        const error = renew.res?.body.error === undefined ? '' : ` ${String(renew.res.body.error)}`
        const answer = renew.res?.status === 200 ? '200 without the hold' : `${renew.res?.status ?? 'no answer'}${error}`
        return { answer: `${g.sessionId ? 'keepalive' : 'renew'} ${answer}` }
      }
      stats.renewed++
      story += `; renewed via r${renew.replica} at ${(renew.sentAt - o.startedAt).toFixed(0)} validity ${renew.res.body.validityMs as number}`
      return { window: { from: renew.sentAt, ms: renew.res.body.validityMs as number } }
    }

    /** A leader's new value (an election only, half the time), while it still believes it leads. */
    const maybeProclaim = async () => {
      if (!spec.election || !rng.chance(0.5) || performance.now() > end - 30) return
      const value = `${g.name}/${fence}/${rng.int(0, 999)}`
      const proclaimed = await call(rng, 'proclaim', 'PUT', `${spec.path}/proclaim`, token, 0, { token, value })
      noteIfLost(proclaimed, end, g.sentAt, 'proclaim', `PUT ${spec.path}/proclaim`, notHeld(proclaimed))
    }

    // A grant that arrives after its validity (counted from the send time: a slow link, a stopped
    // replica) is no hold: the client does not act on it (no proclaim, no renew), it only releases it (or
    // abandons it, as its behaviour says).
    const late = g.doneAt > g.sentAt + validityMs
    if (late) stats.lateGrants++
    // The grant took more than a third of its validity (a wait in line): what is left of the window
    // counted from the acquire's send time may be little or nothing, so a renew re-anchors it.
    else if (g.doneAt - g.sentAt > validityMs * CUT_SHARE) {
      stats.reanchor.needed++
      const renewed = await renewHold()
      if (renewed.window) {
        stats.reanchor.done++
        anchor = renewed.window
        end = anchor.from + anchor.ms
      } else {
        stats.reanchor.failed[renewed.answer] = (stats.reanchor.failed[renewed.answer] ?? 0) + 1
      }
    }

    if (!late) await maybeProclaim()
    if (late) {
      // not acted on: released (or abandoned) below, at once
    } else if (behaviour === 'renew') {
      for (let n = rng.int(1, 2); n > 0; n--) {
        await sleep(Math.max(0, (end - performance.now()) * rng.between(0.3, 0.6)))
        await maybeProclaim()
        if (performance.now() > end - 30) break // only renew a hold it still believes it has
        // A renew sets a new expiry. Never a shorter one: then a renew whose answer is lost (a killed
        // replica) can only have lengthened the hold, and the end believed so far stays safe.
        const left = Math.ceil(end - performance.now())
        // A session's keepalive renews its hold for the session's TTL (never shorter than what is left:
        // the hold's lease is at most that TTL).
        const { window } = await renewHold({ ttlMs: rng.int(Math.min(ttlMax, Math.max(300, left + 100)), ttlMax) })
        if (!window) break
        end = window.from + window.ms
      }
    } else if (behaviour === 'overstay') {
      await sleep(Math.max(0, end - performance.now()) + rng.int(50, 300))
    } else {
      await sleep(rng.between(0, Math.max(0, Math.min(50, (end - performance.now()) / 2))))
    }

    const releaseSentAt = behaviour === 'abandon' ? end : performance.now()
    // Times relative to the workload's start, as the fault times in the report are.
    const rel = (t: number) => t - o.startedAt
    // A hold with a lock-delay that its holder never released: its delay runs from its expiry (after `end`).
    const unreleased = () => {
      if (spec.lockDelayMs !== undefined) {
        stats.delay.ends.push({ ...recorded(spec), start: rel(g.doneAt), end: rel(end), delayMs: spec.lockDelayMs })
      }
    }
    if (behaviour === 'abandon') unreleased()
    // Recorded once released: its answer says by when the hold surely ended.
    const endedAt = behaviour === 'abandon' ? undefined : await release(rng, g, end, unreleased)
    o.history.record({
      ...recorded(spec),
      client: story,
      fence,
      start: rel(g.doneAt),
      end: rel(Math.min(releaseSentAt, end)),
      requestStartedAt: rel(g.sentAt),
      validity: { from: rel(anchor.from), ms: anchor.ms },
      endedBy: rel(Math.min(endedAt ?? Infinity, leaseEnd)),
    })
    stats.delay.grants.push({ ...recorded(spec), at: rel(g.sentAt), doneAt: rel(g.doneAt) })
  }

  /**
   * Releases a hold (a session-bound one by closing its session half the time); resolves to when it
   * surely ended: the answer's arrival when it says the hold is gone or was released. A hold gone by
   * the time its release came (sent after the window: it lapsed) was not released: `unreleased()`.
   */
  const release = async (
    rng: Rng,
    g: { spec: HoldSpec; token: string; sessionId?: string; sentAt: number },
    end: number,
    unreleased: () => void,
  ) => {
    const { spec, token, sessionId } = g
    if (sessionId && rng.chance(0.5)) {
      const closed = await call(rng, 'session', 'DELETE', `/sessions/${sessionId}`, '')
      noteIfLost(closed, end, g.sentAt, 'session', `DELETE /sessions`, closed.res?.status === 404)
      if (closed.res?.status === 404 && closed.sentAt >= end) unreleased()
      return closed.res && [200, 404].includes(closed.res.status) ? closed.doneAt : undefined
    }
    const released = await call(rng, 'release', 'DELETE', spec.path, token)
    noteIfLost(released, end, g.sentAt, 'release', `DELETE ${spec.path}`, notHeld(released))
    if (notHeld(released) && released.sentAt >= end) unreleased()
    if (sessionId) await call(rng, 'session', 'DELETE', `/sessions/${sessionId}`, '')
    return released.res && [200, 404, 409].includes(released.res.status) ? released.doneAt : undefined
  }

  const client = async (index: number) => {
    const rng = stream(o.seed, `client-${index}`)
    const name = `client-${index}`
    for (let attempt = 0; attempt < MAX_ITERATIONS && performance.now() < deadline; attempt++) {
      const kind = rng.pick(o.kinds)
      const spec = withLockDelay(rng, kind.choose(rng, rng.pick(keysOf(kind, o.keysPerKind))))
      const ttlMs = rng.int(300, ttlMax)
      const waitMs = rng.chance(0.4) ? rng.int(200, waitMax) : 0
      const behaviour = rng.weighted<Behaviour>([
        [45, 'quick'],
        [30, 'renew'],
        [15, 'overstay'],
        [10, 'abandon'],
      ])
      const token = tokenOf(index, attempt)
      // A session-bound hold: a session of the attempt's TTL first (the hold's lease is the session's).
      let sessionId: string | undefined
      if (spec.session) {
        const opened = await call(rng, 'session', 'POST', '/sessions', '', 0, { ttlMs })
        if (opened.res?.status !== 201) {
          await sleep(rng.int(50, 150))
          continue
        }
        sessionId = opened.res.body.id as string
      }
      const acquire = acquireOf(spec, { ttlMs, waitMs, token, candidate: name, value: `${name}/a${attempt}`, sessionId })
      const { res, sentAt, doneAt, replica } = await call(rng, 'acquire', 'POST', acquire.path, token, waitMs, acquire.body)

      // A 200 (a re-grant, wrong for a fresh token: counted in call) is a hold too.
      if (res?.status === 201 || res?.status === 200) {
        await holdAndRelease({
          rng,
          name,
          kind: kind.name,
          spec,
          token,
          behaviour,
          ttlMs,
          waitMs,
          grant: res,
          sentAt,
          doneAt,
          replica,
          ...(sessionId ? { sessionId } : {}),
        })
      } else if (res?.status === 409) {
        await sleep(rng.int(5, 30))
      } else {
        await sleep(rng.int(50, 150)) // 503, a dead replica, or something unexpected (counted)
      }
      await sleep(rng.int(0, 20))
    }
  }

  await Promise.all(Array.from({ length: o.clients }, (_, i) => client(i)))
  return stats
}

/**
 * The acquire of a hold: the path with its query, or an election's campaign with a JSON body. A
 * session-bound hold gives its session; a waitMs of 0 does not wait.
 */
function acquireOf(
  spec: HoldSpec,
  a: { ttlMs: number; waitMs: number; token: string; candidate: string; value?: string; sessionId?: string | undefined },
): { path: string; body?: object } {
  if (spec.election) {
    const body = {
      candidate: a.candidate,
      ttlMs: a.ttlMs,
      token: a.token,
      ...(a.value === undefined ? {} : { value: a.value }),
      ...(a.waitMs > 0 ? { waitMs: a.waitMs } : {}),
      ...(a.sessionId ? { session: a.sessionId } : {}),
    }
    return { path: `${spec.path}/campaign`, body }
  }
  const bound = a.sessionId ? `&session=${a.sessionId}` : ''
  const delay = spec.lockDelayMs === undefined ? '' : `&lockDelay=${spec.lockDelayMs}`
  const query = `?ttl=${a.ttlMs}${a.waitMs > 0 ? `&wait=${a.waitMs}` : ''}${spec.acquireQuery ? `&${spec.acquireQuery}` : ''}${bound}${delay}`
  return { path: `${spec.path}${query}` }
}

/** A grant's fence: an election's term. */
function fenceOf(spec: HoldSpec, grant: HttpResult): number {
  return (spec.election ? grant.body.term : grant.body.fence) as number
}

/** What the history checker needs of a hold's spec (a semaphore's: also the permits and the limit). */
function recorded(spec: HoldSpec) {
  return {
    key: spec.key,
    namespace: spec.namespace,
    mode: spec.mode,
    ...(spec.mode === 'permit' ? { permits: spec.permits, limit: spec.limit } : {}),
  }
}

function isExpected(op: Op, res: HttpResult): boolean {
  if (res.status === 503) return ALLOWED_503.includes(String(res.body.error))
  // A session-bound acquire whose session lapsed while it waited in line (no keepalive meanwhile) leaves the line.
  if (op === 'acquire' && res.status === 404) return res.body.error === 'session_not_found'
  return EXPECTED[op].includes(res.status)
}

/** A fresh hold of every key through every replica, once all faults healed: each must answer 201. */
export async function probeGrantable(o: {
  kinds: readonly HoldKind[]
  keysPerKind: number
  replicaUrls: readonly string[]
  history: History
  settings: ServiceSettings
  startedAt: number
}): Promise<{ ok: number; failures: string[] }> {
  const timeoutMs = 3 * o.settings.nodeTimeoutMs + SLACK_MS
  let ok = 0
  let attempt = 0
  const failures: string[] = []
  /** One fresh acquire (recorded) and its release; the answer's status and error code. */
  const probe = async (r: number, url: string, spec: HoldSpec): Promise<string> => {
    const token = tokenOf(1_000 + r, attempt++)
    const sentAt = performance.now()
    const acquire = acquireOf(spec, { ttlMs: 1000, waitMs: 0, token, candidate: `probe-r${r}` })
    const res = await request(url, 'POST', acquire.path, { token, timeoutMs, ...(acquire.body ? { body: acquire.body } : {}) })
    if (res.status !== 201) return `${res.status} ${String(res.body.error ?? '')}`.trim()
    const doneAt = performance.now() - o.startedAt
    const validity = { from: sentAt - o.startedAt, ms: res.body.validityMs as number }
    const releaseSentAt = performance.now() - o.startedAt
    const released = await request(url, 'DELETE', spec.path, { token, timeoutMs })
    o.history.record({
      ...recorded(spec),
      client: `probe via r${r}`,
      fence: fenceOf(spec, res),
      start: doneAt,
      end: Math.min(releaseSentAt, validity.from + validity.ms),
      requestStartedAt: validity.from,
      validity,
      endedBy: released.status === 200 ? performance.now() - o.startedAt : doneAt + (res.body.ttlMs as number),
    })
    return '201'
  }
  for (const [r, url] of o.replicaUrls.entries()) {
    for (const kind of o.kinds) {
      for (const key of keysOf(kind, o.keysPerKind)) {
        const spec = kind.probe(key)
        let outcome = ''
        // A 503 on this loaded machine may be a node answering late: try again. A 409 is a finding, but
        // for a lock-delay still running (at most MAX_CHAOS_LOCK_DELAY_MS after an abandoned hold lapsed).
        for (let tries = 0; tries < PROBE_TRIES && !/^(201|409(?! lock_delayed))/.test(outcome); tries++) {
          if (tries > 0) await sleep(outcome.startsWith('409') ? MAX_CHAOS_LOCK_DELAY_MS : 300)
          outcome = await probe(r, url, spec).catch((err: Error) => err.message)
        }
        if (outcome === '201') ok++
        else failures.push(`replica ${r}: POST ${spec.path} → ${outcome}`)
      }
    }
  }
  return { ok, failures }
}
