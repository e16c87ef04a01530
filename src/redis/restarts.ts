import { performance } from 'node:perf_hooks'
import type { RedisNode } from './node.js'
import type { Identity, RestartVerdict } from './vote-rule.js'

/**
 * Redlock's delayed restart, without trusting any replica's memory. A node that restarts empty has
 * forgotten the locks it voted for, and the lock-delays after them; if it voted again at once, it and
 * the nodes that missed a grant could form a second majority. So a node that restarted counts toward
 * no majority until every hold granted before its restart, and its delay, has lapsed: `windowMs`
 * ((MAX_TTL_MS + MAX_LOCK_DELAY_MS) × (1 + DRIFT_FACTOR)) from its start.
 *
 * Its start comes from the node itself: INFO uptime_in_seconds, which Redis counts between two whole
 * seconds of the wall clock (its start and now, each rounded down), so it can read up to a second
 * more than the node has been up. The check takes a second off it, so the window can only run long
 * (without that, a hold granted just before a restart outlived the quarantine by up to a second:
 * test/faults/safety-faults.test.ts caught an overlap of 487 ms).
 *
 * Whether it is a *re*start (and not the first start of a new quorum, which has nothing to
 * forget) comes from its peers: every node keeps, under `<KEY_PREFIX>node:<i>:runs`, the run_ids
 * seen for node i. A young node whose record on any peer names another run_id restarted. A young
 * node counts at once only when every peer answers and none names another run_id; otherwise it
 * waits (not counting) until it can tell, or until its window has passed.
 *
 * Why that is enough: a node's answers count only once its run_id is recorded on at least
 * majority − 1 peers; at most a minority of nodes loses data at once (Redlock's assumption), so a
 * peer that heard of its previous run keeps the record, and the restart check asks every peer.
 */
export class RestartGuard {
  private readonly recordTtlMs: number

  constructor(
    private readonly nodes: readonly RedisNode[],
    private readonly majority: number,
    private readonly windowMs: number,
    private readonly recordKey: (index: number) => string,
  ) {
    this.recordTtlMs = Math.max(2 * windowMs, 10 * 60_000)
  }

  /** How long a node restarted `uptimeMs` ago still waits; RedisNode.identify applies the verdict. */
  async check(node: RedisNode, identity: Identity): Promise<RestartVerdict> {
    const now = performance.now()
    const uptimeMs = Math.max(0, identity.uptimeMs - UPTIME_RESOLUTION_MS)
    const young = uptimeMs < this.windowMs
    const peers = this.nodes.filter((n) => n !== node)
    // An old node's record is reset to its current run: earlier runs no longer matter.
    const answers = await Promise.allSettled(
      peers.filter((p) => p.up).map((p) => p.recordRun(this.recordKey(node.index), identity.runId, !young, this.recordTtlMs)),
    )
    const recorded = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []))
    const restarted =
      (identity.previousRunId !== undefined && identity.previousRunId !== identity.runId) ||
      recorded.some((runs) => runs.some((r) => r !== identity.runId))
    if (recorded.length < this.majority - 1) return { counts: false, retryInMs: 250 }
    if (!young) return { counts: true, quarantineUntil: 0, restarted }
    if (restarted) return { counts: true, quarantineUntil: now - uptimeMs + this.windowMs, restarted }
    if (recorded.length < peers.length) return { counts: false, retryInMs: 250 }
    return { counts: true, quarantineUntil: 0, restarted: false }
  }

  /**
   * Keep every counting node's record on its peers (a peer that restarted lost them; records expire
   * when no replica runs). Fire and forget: the next round retries what failed.
   */
  refresh(): void {
    for (const node of this.nodes) {
      const runId = node.identifiedRunId
      if (runId === undefined) continue
      for (const peer of this.nodes) {
        if (peer !== node && peer.up) peer.recordRun(this.recordKey(node.index), runId, false, this.recordTtlMs).catch(() => undefined)
      }
    }
  }
}

/** How much more than a node's real uptime INFO's uptime_in_seconds may say (two whole seconds of the wall clock apart). */
const UPTIME_RESOLUTION_MS = 1000
