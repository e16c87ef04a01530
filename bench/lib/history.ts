/**
 * The safety check of the contended scenarios: the holds a flow was granted, recorded per load run
 * with the test suite's checker (harness/history.ts: no two conflicting holds overlap, fences
 * strictly increase), so a benchmark never reports the speed of an unsafe service.
 */
import { History, type HoldMode } from '../../harness/history.js'
import type { FlowContext } from './load.js'

/** The kind of hold a flow takes: a lock's (exclusive), or a semaphore's permits of its limit. */
export interface Kind {
  mode: HoldMode
  permits?: number
  limit?: number
}

export class HoldHistory {
  private readonly runs = new Map<string, History>()

  /**
   * One hold of connection `ctx.conn` on `key`: its grant's body (fence, validityMs), when the acquire
   * was sent and its answer read, and when the release was sent (performance.now(), taken by the flow
   * around its requests, so the recorded hold is never shorter than the one the client believed in).
   */
  record(
    ctx: FlowContext,
    key: string,
    hold: Kind,
    grant: { body: Buffer; requestStartedAt: number; responseAt: number },
    releaseSentAt: number,
  ): void {
    const { fence, validityMs } = JSON.parse(grant.body.toString('utf8')) as { fence: number; validityMs: number }
    let history = this.runs.get(ctx.runId)
    if (!history) this.runs.set(ctx.runId, (history = new History()))
    history.recordGrant({
      key,
      ...hold,
      client: `c${ctx.conn}`,
      fence,
      requestStartedAt: grant.requestStartedAt,
      responseAt: grant.responseAt,
      validityMs,
      releaseSentAt,
    })
  }

  /** Holds recorded and violations found, over every run so far; `first`: the first violation's message. */
  check(): { holds: number; violations: number; first?: string } {
    let holds = 0
    let violations = 0
    let first: string | undefined
    for (const history of this.runs.values()) {
      holds += history.size
      const found = history.check()
      violations += found.length
      first ??= found[0]?.message
    }
    return { holds, violations, ...(first ? { first } : {}) }
  }
}
