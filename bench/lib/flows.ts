/** Load flows shared by several scenarios. */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Flow, FlowContext } from './load.js'
import type { HoldHistory, Kind } from './history.js'

/** A caller-chosen owner token: 128 random bits, base64url (what the service would make itself). */
export function randomToken(): string {
  return randomBytes(16).toString('base64url')
}

/** The per-connection `Lock-Token` header, made once per connection. */
export function tokenHeaders(ctx: FlowContext): Record<string, string> {
  let headers = ctx.state.headers as Record<string, string> | undefined
  if (!headers) ctx.state.headers = headers = { 'lock-token': randomToken() }
  return headers
}

export function expectStatus(label: string, status: number, wanted: readonly number[], body: Buffer): void {
  if (!wanted.includes(status)) throw new Error(`${label}: HTTP ${status} ${body.toString('utf8', 0, 200)}`)
}

/**
 * Uncontended: acquire a lock nobody else uses (a new key every cycle) and release it.
 * Two requests per cycle: POST /locks/:key → 201, DELETE /locks/:key → 200.
 */
export const acquireRelease: Flow = async (ctx) => {
  const headers = tokenHeaders(ctx)
  const path = `/locks/u.${ctx.runId}.${ctx.conn}.${ctx.iter}`
  const acquired = await ctx.request('acquire', 'POST', path, { headers })
  expectStatus('acquire', acquired.status, [201], acquired.body)
  const released = await ctx.request('release', 'DELETE', path, { headers })
  expectStatus('release', released.status, [200], released.body)
}

/**
 * Every connection waits in line on one hot key, holds its grant for ~0 ms and releases it:
 * POST `path(ctx)` + `?query` (with wait) → 201 → DELETE → 200. Counts `granted`, `grants.c<conn>`
 * (fairness) and `timeout` (a wait that ran out), and samples `handoff`: from a DELETE being sent to
 * the 201 it hands over, pairing releases with grants first in, first out per load run. `holders`:
 * how many hold at once (a lock 1, a semaphore of limit n with one permit each n). The first
 * `holders` grants of a run follow no release, so the line of releases starts with as many
 * placeholders: then the k-th grant after them pairs with the k-th release, the one that freed its
 * place (releases run one at a time in Redis and hand over in that order). `history`: where the
 * holds (of that kind) are recorded for the safety check (lib/history.ts), for a server that excludes.
 */
export function waitingCycle(
  path: (ctx: FlowContext) => string,
  query: string,
  holders = 1,
  history?: { log: HoldHistory; kind: Kind },
): Flow {
  /**
   * Per load run and key: when the DELETEs not yet followed by their grant were sent (performance.now());
   * null: a free place at the start. Per key, so that a flow spreading its connections over several
   * hot keys pairs each grant with a release of its own key.
   */
  const releasesSentAt = new Map<string, (number | null)[]>()
  return async (ctx) => {
    const headers = tokenHeaders(ctx)
    const at = path(ctx)
    const requestStartedAt = performance.now()
    const acquired = await ctx.request('acquire', 'POST', `${at}?${query}`, { headers })
    const responseAt = performance.now()
    if (acquired.status === 409) {
      // The wait ran out (never expected: a full line turns over in well under its wait).
      ctx.count('timeout')
      return
    }
    expectStatus('acquire', acquired.status, [201], acquired.body)
    const line = `${ctx.runId} ${at}`
    let pending = releasesSentAt.get(line)
    if (!pending) releasesSentAt.set(line, (pending = Array<null>(holders).fill(null)))
    const sentAt = pending.shift()
    if (typeof sentAt === 'number') ctx.sample('handoff', performance.now() - sentAt)
    ctx.count('granted')
    ctx.count(`grants.c${ctx.conn}`)
    // Hold ~0 ms: release at once.
    const releaseSentAt = performance.now()
    pending.push(releaseSentAt)
    history?.log.record(ctx, at, history.kind, { body: acquired.body, requestStartedAt, responseAt }, releaseSentAt)
    const released = await ctx.request('release', 'DELETE', at, { headers })
    expectStatus('release', released.status, [200], released.body)
  }
}
