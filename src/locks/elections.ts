import type { Config } from '../config.js'
import { fail } from '../errors.js'
import type { Quorum, Tally } from '../redis/quorum.js'
import { ReplyCode } from '../redis/scripts.js'
import { electionKeys, type ElectionKeys } from './keys.js'
import { electionStampScript, type ElectionStampInput, type TermRecord } from './scripts/election_stamp.js'
import { electionStateScript, type ElectionStateReply } from './scripts/election_state.js'
import { backendUnavailable, countedValues, majorityFloor, notHeld, settledByMajority } from './votes.js'

/** An election's leader as a majority of nodes has it (never its token). */
export interface Leader {
  candidate: string
  value: string
  term: number
  /** 1 when elected, + 1 per proclaim. */
  revision: number
  /** When its term began (Redis ms). */
  sinceMs: number
  remainingMs: number
  /** The id a push names its hold by when it goes (include/lost.lua). */
  holdId: string
  /** Bound to a session: its expiry is the session's. */
  bound: boolean
}

/** An election: its leader or none, those in line, and the terms begun. */
export interface ElectionState {
  leader: Leader | null
  /**
   * The leader's term; with no leader, the latest term a majority has begun (0: none remembered), or
   * below a term being begun.
   */
  term: number
  candidates: number
  transitions: number
  /** No leader, but a hold granted whose term has no record yet, which lapses in this many ms (0: none). */
  pendingMs: number
}

/**
 * Elections on top of the lock engine: leadership is a write hold in namespace `elect` whose fence is
 * the term (campaign, renew, resign and force-release are the lock engine's acquire, renew, release
 * and forceRelease with mode `leader`). What elections add lives here: the record of each term
 * (election_stamp.lua: its start, revision and value, made right after the grant; proclaim) and the
 * state a majority agrees on (election_state.lua), which GET and the observers read.
 */
export class Elections {
  constructor(
    private readonly quorum: Quorum,
    private readonly config: Config,
  ) {}

  keys(name: string): ElectionKeys {
    return electionKeys(this.config.keyPrefix, name)
  }

  /** The record of the term `token` leads since `sinceMs` (made once, after its grant; a re-campaign reads it). */
  stamp(name: string, token: string, value: string, sinceMs: number): Promise<TermRecord> {
    return this.record(name, { op: 'stamp', token, value, sinceMs })
  }

  /** PUT /elections/:name/proclaim: the leader's new value (its revision + 1). */
  proclaim(name: string, token: string, value: string): Promise<TermRecord> {
    return this.record(name, { op: 'proclaim', token, value })
  }

  private async record(name: string, input: ElectionStampInput): Promise<TermRecord> {
    const keys = this.keys(name)
    const tally = await this.quorum.ask((node) => node.call(electionStampScript, keys.all, input), settledByMajority)
    const counted = countedValues(tally)
    const done = counted.flatMap((r) => (r.code === ReplyCode.STAMPED ? [r] : []))
    if (done.length < tally.majority) throw notHeld(this.quorum, tally, counted, name, 'election')
    const revision = majorityFloor(
      done.map((r) => r.revision),
      tally.majority,
    )
    const chosen = done.find((r) => r.revision === revision) ?? done[0]
    if (!chosen) throw backendUnavailable(this.quorum, tally, 'no_majority')
    return {
      term: chosen.term,
      revision,
      sinceMs: Math.min(...done.map((r) => r.sinceMs)),
      remainingMs: majorityFloor(
        done.map((r) => r.remainingMs),
        tally.majority,
      ),
      transitions: majorityFloor(
        done.map((r) => r.transitions),
        tally.majority,
      ),
      value: chosen.value,
    }
  }

  /**
   * The state a majority agrees on: a leader counts while a majority has the same live hold with its
   * term's record; its revision (and value) is the highest a majority has reached. `watch`: an
   * observer's look, which flags the leader's hold so that its end is pushed.
   */
  async state(name: string, watch = false): Promise<ElectionState> {
    const keys = this.keys(name)
    const tally = await this.quorum.ask((node) => node.call(electionStateScript, keys.all, { watch }), settledOnLeader)
    const counted = countedValues(tally)
    const majority = tally.majority
    if (counted.length < majority) throw backendUnavailable(this.quorum, tally, 'no_majority')
    const leading = counted.flatMap((r) => (r.code === ReplyCode.LEADING ? [r] : []))
    const candidates = Math.max(0, ...counted.map((r) => r.candidates))
    const transitions = majorityFloor(
      counted.map((r) => r.transitions),
      majority,
    )
    const leader = leaderOf(leading, majority)
    if (leader) return { leader, term: leader.term, candidates, transitions, pendingMs: 0 }
    // A hold some nodes have without a majority (an attempt under way, or one that failed) lapses by itself.
    const pendingMs = Math.max(0, ...counted.map((r) => (r.code === ReplyCode.VACANT ? r.pendingMs : r.remainingMs)))
    const latest = majorityFloor(
      counted.map((r) => (r.code === ReplyCode.VACANT ? r.lastTerm : r.term)),
      majority,
    )
    // A term being begun (granted, its record not yet made, or held without a majority) is not over:
    // with no leader, the term shown stays below it, so that its leader, once shown, is newer.
    const starting = counted.flatMap((r) => (r.code === ReplyCode.VACANT ? (r.pendingTerm > 0 ? [r.pendingTerm] : []) : [r.term]))
    const term = starting.length > 0 ? Math.min(latest, Math.min(...starting) - 1) : latest
    return { leader: null, term: Math.max(0, term), candidates, transitions, pendingMs }
  }

  /** GET /elections/:name: 404 when it has neither a leader nor candidates. */
  async inspect(name: string): Promise<ElectionState> {
    const state = await this.state(name)
    if (!state.leader && state.candidates === 0) throw fail.notFound(name, `election "${name}" has no leader and no candidates`)
    return state
  }
}

type Leading = Extract<ElectionStateReply, { code: typeof ReplyCode.LEADING }>

/**
 * For a look at an election: settled once the answers in decide who leads — a majority names the same
 * leader's hold, or too many name none (or another) for any hold to have a majority. Not merely once a
 * majority answered: a node a grant has not reached would make a leader look absent.
 */
function settledOnLeader(t: Tally<ElectionStateReply>): boolean {
  const counted = countedValues(t)
  const byHold = new Map<string, number>()
  let best = 0
  for (const r of counted) {
    if (r.code !== ReplyCode.LEADING) continue
    const id = `${r.holdId}|${r.term}`
    const n = (byHold.get(id) ?? 0) + 1
    byHold.set(id, n)
    best = Math.max(best, n)
  }
  if (best >= t.majority) return true
  // The most any one hold can still reach: its answers so far plus every node yet to answer.
  return best + t.pending < t.majority && counted.length >= t.majority
}

/** The hold a majority of `leading` answers name (the same hold: its id and term), if any. */
function leaderOf(leading: readonly Leading[], majority: number): Leader | null {
  if (leading.length < majority) return null
  const byHold = new Map<string, Leading[]>()
  for (const r of leading) {
    const id = `${r.holdId}|${r.term}`
    byHold.set(id, [...(byHold.get(id) ?? []), r])
  }
  for (const same of byHold.values()) {
    if (same.length < majority) continue
    const revision = majorityFloor(
      same.map((r) => r.revision),
      majority,
    )
    const chosen = same.find((r) => r.revision === revision) ?? (same[0] as Leading)
    return {
      candidate: chosen.candidate,
      value: chosen.value,
      term: chosen.term,
      revision,
      sinceMs: Math.min(...same.map((r) => r.sinceMs)),
      remainingMs: majorityFloor(
        same.map((r) => r.remainingMs),
        majority,
      ),
      holdId: chosen.holdId,
      bound: same.some((r) => r.bound),
    }
  }
  return null
}
