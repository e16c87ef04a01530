import { NodeError, RedisNode, type NodeFailure, type NodeStatus } from './node.js'
import type { ScriptName } from './scripts.js'
import type { NodeLogger } from './health.js'
import type { Metrics } from '../metrics.js'

/** What one node said: a reply, or why it gave none (still pending when the vote settled = timeout). */
export type Answer<T> = { node: RedisNode; ok: true; value: T } | { node: RedisNode; ok: false; reason: NodeFailure; message: string }

export interface Tally<T> {
  readonly size: number
  readonly majority: number
  readonly answers: readonly Answer<T>[]
  readonly pending: number
}

/**
 * Runs one call on every node in parallel and settles as soon as `settled` says the outcome is known
 * (typically: a majority for, or a majority against), or when every node has answered. Each node's
 * call is bounded by the node timeout, so a vote never outlasts it. N = 1 is the quorum of one.
 */
export class Quorum {
  readonly majority: number

  constructor(
    readonly nodes: readonly RedisNode[],
    readonly metrics: Metrics,
  ) {
    if (nodes.length === 0) throw new Error('a quorum needs at least one node')
    this.majority = Math.floor(nodes.length / 2) + 1
  }

  get size(): number {
    return this.nodes.length
  }

  ask<T>(call: (node: RedisNode) => Promise<T>, settled: (tally: Tally<T>) => boolean = () => false): Promise<Tally<T>> {
    return new Promise((resolve) => {
      const answers: Answer<T>[] = []
      let done = false
      const tally = (): Tally<T> => ({ size: this.nodes.length, majority: this.majority, answers, pending: this.nodes.length - answers.length })
      const settle = () => {
        if (done) return
        const t = tally()
        if (t.pending === 0 || settled(t)) {
          done = true
          resolve({ ...t, answers: [...answers] })
        }
      }
      for (const node of this.nodes) {
        call(node).then(
          (value) => {
            answers.push({ node, ok: true, value })
            settle()
          },
          (err: unknown) => {
            const failure = err instanceof NodeError ? err : new NodeError('error', String(err))
            answers.push({ node, ok: false, reason: failure.reason, message: failure.message })
            settle()
          },
        )
      }
    })
  }

  /** Node summary for 503 bodies: what each node did in this vote (a node that refused a connection is down). */
  describe(tally?: Tally<unknown>): (NodeStatus & { answered: boolean })[] {
    return this.nodes.map((n) => {
      const answer = tally?.answers.find((a) => a.node === n)
      const unreachable = answer !== undefined && !answer.ok && answer.reason === 'unavailable'
      return { ...n.status(), up: n.up && !unreachable, answered: tally === undefined ? n.up : answer?.ok === true }
    })
  }

  /**
   * Wait (bounded) for the first connections, so a fresh service does not answer 503 needlessly.
   * A configured node that is a replica is refused: a failover would promote a copy that lacks the
   * latest locks, so every lock node must be an independent master.
   */
  async connect(withinMs: number): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.waitUntilReady(withinMs)))
    const replicas = this.nodes.filter((n) => n.isReplica)
    if (replicas.length > 0) {
      throw new Error(
        `REDIS_URLS must name independent masters, but ${replicas.map((n) => `node ${n.index} (${n.address})`).join(', ')} ` +
          `${replicas.length === 1 ? 'is a replica' : 'are replicas'}: failover setups lose locks`,
      )
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.close()))
  }
}

export function createQuorum(
  urls: readonly string[],
  options: { timeoutMs: number; maxTtlMs: number; scripts: ReadonlyMap<ScriptName, string>; log?: NodeLogger },
  metrics: Metrics,
): Quorum {
  const quarantineMs = urls.length >= 3 ? options.maxTtlMs : 0
  return new Quorum(
    urls.map((url, index) => new RedisNode(index, url, { timeoutMs: options.timeoutMs, quarantineMs, scripts: options.scripts, log: options.log }, metrics)),
    metrics,
  )
}
