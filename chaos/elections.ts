/**
 * The elections of a chaos run: their observers run from the start until the final probes are over;
 * then each election's true final state is read, the observers are given the watch timing to show it,
 * and stopped. What they were shown is judged with the holds (History.checkObservers) in the report.
 */
import { setMaxListeners } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { History } from '../harness/history.js'
import { request } from '../harness/http.js'
import { keysOf } from './clients.js'
import { election } from './kinds/election.js'
import { runObservers, type ObserverStats } from './observers.js'
import type { ServiceSettings } from './options.js'

/** Beyond the service's node budget: slack for a loaded 2-core machine, as for a request's answer. */
const SLACK_MS = 2_000

export interface ElectionsOutcome {
  stats: ObserverStats
  /** per `elections/KEY`: the state every observer must end on */
  final: Map<string, { term: number; leader: boolean }>
  /** failures reading the final states (the observers are then not judged on them) */
  finalFailures: string[]
  /** how long after a term surely ended an observer may still show it */
  staleAfterMs: number
}

/** How long after a term surely ended an observer may still show its leader: a push or an expiry, on a loaded machine. */
export function observeStaleMs(settings: ServiceSettings): number {
  return 3 * settings.nodeTimeoutMs + SLACK_MS
}

export function startElections(o: {
  seed: number
  keysPerKind: number
  settings: ServiceSettings
  replicaUrl: (r: number) => string
  replicas: number
  history: History
  startedAt: number
}): { finish: () => Promise<ElectionsOutcome> } {
  const stop = new AbortController()
  // Every observer and each of its streams listens for the stop: more than Node's default 10.
  setMaxListeners(0, stop.signal)
  const keys = keysOf(election, o.keysPerKind)
  const running = runObservers({ ...o, keys, stop: stop.signal })
  return {
    async finish() {
      const final = new Map<string, { term: number; leader: boolean }>()
      const finalFailures: string[] = []
      for (const key of keys) {
        const res = await request(o.replicaUrl(0), 'GET', `/elections/${key}`, {
          timeoutMs: 3 * o.settings.nodeTimeoutMs + SLACK_MS,
        }).catch((err: Error) => err)
        const highest = o.history.highestFence(key, 'elections')
        if (res instanceof Error || (res.status !== 200 && res.status !== 404)) {
          finalFailures.push(`GET /elections/${key}: ${res instanceof Error ? res.message : `${res.status} ${JSON.stringify(res.body)}`}`)
          continue
        }
        // 404: no leader and nobody in line; the term that ended last is then the highest granted.
        const leader = res.status === 200 ? (res.body.leader as { term?: unknown } | null) : null
        const term = typeof leader?.term === 'number' ? leader.term : Math.max(highest, Number(res.body.term ?? 0))
        final.set(`elections/${key}`, { term, leader: leader !== null })
      }
      const staleAfterMs = observeStaleMs(o.settings)
      await sleep(staleAfterMs)
      stop.abort()
      return { stats: await running, final, finalFailures, staleAfterMs }
    },
  }
}
