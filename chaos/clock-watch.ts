/**
 * Watches each replica's /readyz for its per-node clock verdict (`nodes[i].clock`, a state such as
 * 'trusted' / 'untrusted'), to time how long a clock fault takes to be detected — and to notice a
 * clock within the allowance being distrusted. The field is read defensively: a service without it
 * gives "n/a", never an error.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from '../harness/http.js'
import type { Cluster } from './cluster.js'
import type { FaultRecord } from './nemesis.js'

const POLL_MS = 250
const READYZ_TIMEOUT_MS = 1_000
/** A verdict may come a little after the heal (the replica samples each node about once a second). */
const AFTER_HEAL_MS = 1_500

interface Sample {
  at: number
  replica: number
  node: number
  distrusted: boolean
}

export interface Detection {
  /** ms from the fault to the first replica's verdict, per replica (null: that replica never said so) */
  perReplicaMs: (number | null)[]
  /** 'n/a': the service does not report clocks; 'probation': it distrusted the node already before */
  status: 'detected' | 'not detected' | 'n/a' | 'probation'
}

/** The state in `nodes[i].clock`, whether a string or `{ state }`; undefined when absent. */
export function clockState(node: unknown): string | undefined {
  if (!node || typeof node !== 'object') return undefined
  const clock = (node as { clock?: unknown }).clock
  if (typeof clock === 'string') return clock
  if (clock && typeof clock === 'object') {
    const state = (clock as { state?: unknown }).state
    if (typeof state === 'string') return state
  }
  return undefined
}

function isDistrusted(node: unknown, state: string | undefined): boolean {
  const vote = (node as { vote?: unknown }).vote
  return (state !== undefined && /untrust|distrust/i.test(state)) || vote === 'clock_untrusted'
}

export class ClockWatch {
  readonly #samples: Sample[] = []
  #fieldSeen = false
  #stopped = false
  #loop: Promise<void> | undefined

  constructor(
    private readonly cluster: Cluster,
    private readonly startedAt: number,
  ) {}

  /** Whether any /readyz answer carried a clock state. */
  get reported(): boolean {
    return this.#fieldSeen
  }

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopped) {
        await Promise.all(this.cluster.replicas.map((r) => (r.process ? this.poll(r.index, r.url) : undefined)))
        await sleep(POLL_MS)
      }
    })()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await this.#loop
  }

  private async poll(replica: number, url: string): Promise<void> {
    try {
      const res = await request(url, 'GET', '/readyz', { timeoutMs: READYZ_TIMEOUT_MS })
      const at = performance.now() - this.startedAt
      const nodes = Array.isArray(res.body.nodes) ? (res.body.nodes as unknown[]) : []
      nodes.forEach((node, i) => {
        const state = clockState(node)
        if (state !== undefined) this.#fieldSeen = true
        const index = typeof (node as { index?: unknown }).index === 'number' ? (node as { index: number }).index : i
        this.#samples.push({ at, replica, node: index, distrusted: isDistrusted(node, state) })
      })
    } catch {
      // a replica being killed or restarted: no sample
    }
  }

  /** When each replica first distrusted the fault's node after it began (until shortly after its heal). */
  detection(fault: FaultRecord): Detection {
    const replicas = this.cluster.replicas.length
    if (!this.#fieldSeen || fault.appliedAt === undefined) return { perReplicaMs: Array(replicas).fill(null), status: 'n/a' }
    const from = fault.appliedAt
    const until = (fault.healedAt ?? from) + AFTER_HEAL_MS
    let probation = false
    const perReplicaMs = Array.from({ length: replicas }, (_, r) => {
      let first: number | null = null
      for (const node of fault.nodes) {
        const series = this.#samples.filter((s) => s.replica === r && s.node === node)
        const before = series.filter((s) => s.at <= from).at(-1)
        if (before?.distrusted) probation = true
        const hit = series.find((s) => s.at > from && s.at <= until && s.distrusted)
        if (hit && (first === null || hit.at - from < first)) first = hit.at - from
      }
      return first === null ? null : Math.round(first)
    })
    if (perReplicaMs.some((ms) => ms !== null)) return { perReplicaMs, status: probation ? 'probation' : 'detected' }
    return { perReplicaMs, status: probation ? 'probation' : 'not detected' }
  }
}
