/** Load flows shared by several scenarios. */
import { randomBytes } from 'node:crypto'
import type { Flow, FlowContext } from './load.js'

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
