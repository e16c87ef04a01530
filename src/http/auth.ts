import { createHash, timingSafeEqual } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { TLSSocket } from 'node:tls'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { fail } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { parseSubject, subjectMatches, subjectText } from '../tls-files.js'

/** Who is calling: the API key that matched (null while the service runs open, without AUTH_FILE). */
export interface Caller {
  name: string
  prefixes: readonly string[]
  admin: boolean
  /** Reads only: a downstream resource's key, which can check a fence but never take or break a lock. */
  readOnly: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null
    /** An admin action this request took: logged with the request's one log line. */
    adminAction: Record<string, unknown> | null
  }
  interface FastifyContextConfig {
    /** 'public': no API key needed; 'metrics': needed only with PROTECT_METRICS=true. */
    access?: 'public' | 'metrics'
  }
}

/**
 * API keys (AUTH_FILE): `Authorization: Bearer <secret>`. The secret's SHA-256 is compared with every
 * configured hash in constant time (all of them, whatever matches), and no secret is ever logged.
 * A 401 is answered AUTH_FAILURE_DELAY_MS after the request arrived, whether the header was missing,
 * malformed or held an unknown secret: the time taken does not say which, and a guesser waits.
 * A 403 is not delayed: only a caller holding a valid secret gets one, and its own scope is no secret to it.
 */
export function installAuth(app: FastifyInstance, config: Config, metrics: Metrics): void {
  app.decorateRequest('caller', null)
  app.decorateRequest('adminAction', null)
  if (!config.auth) return
  const keys = config.auth.keys.map((k) => ({
    caller: { name: k.name, prefixes: k.prefixes, admin: k.admin, readOnly: k.readOnly ?? false },
    hash: Buffer.from(k.secretSha256, 'hex'),
    certSubject: k.certSubject,
    subject: k.certSubject === undefined ? undefined : parseSubject(k.certSubject),
  }))

  const refuse = async (arrived: number, message: string): Promise<never> => {
    metrics.authFailures.inc()
    const left = arrived + config.authFailureDelayMs - performance.now()
    if (left > 0) await sleep(left)
    throw fail.unauthorized(message)
  }

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access
    if (access === 'public' || request.routeOptions.url === undefined) return
    if (access === 'metrics' && !config.protectMetrics) return
    const arrived = performance.now()
    const secret = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1]
    if (!secret) return refuse(arrived, 'send an API key: Authorization: Bearer <secret>')
    const presented = createHash('sha256').update(secret).digest()
    let matched: (typeof keys)[number] | null = null
    for (const key of keys) {
      if (timingSafeEqual(presented, key.hash) && matched === null) matched = key
    }
    if (!matched) return refuse(arrived, 'the API key is not valid')
    const match = matched.caller
    if (matched.subject) {
      // A key bound to a client certificate: its secret alone (leaked, say) is not enough.
      const peer = (request.raw.socket as Partial<TLSSocket>).getPeerCertificate?.()
      if (!peer?.subject || !subjectMatches(matched.subject, peer.subject)) {
        throw fail.forbidden(
          `the API key "${match.name}" is bound to client certificates with subject ${matched.certSubject}; ` +
            `this connection presented ${peer?.subject ? subjectText(peer.subject) : 'no certificate'}`,
        )
      }
    }
    // Every write is a POST, PUT or DELETE, and every GET only reads: deciding by method covers routes added later.
    if (match.readOnly && !READS.has(request.method)) {
      throw fail.forbidden(`the API key "${match.name}" is read-only: it may inspect, check fences and watch, not ${request.method}`)
    }
    request.caller = match
  })
}

const READS: ReadonlySet<string> = new Set(['GET', 'HEAD'])

/** A lock key outside the caller's prefixes is 403 (admin keys may use every key). */
export function authorizeKey(request: FastifyRequest, key: string): void {
  const caller = request.caller
  if (!caller || caller.admin || caller.prefixes.some((p) => key.startsWith(p))) return
  throw fail.forbidden(
    `the API key "${caller.name}" may not use lock "${key}" (allowed prefixes: ${caller.prefixes.join(', ') || 'none'})`,
    { key },
  )
}

/**
 * Admin actions: admin keys only, or anyone while the service runs open. Logged with the caller, in
 * the request's log line (see app.ts).
 */
export function authorizeAdmin(request: FastifyRequest, action: string, details: Record<string, unknown>): void {
  const caller = request.caller
  if (caller && !caller.admin) throw fail.forbidden(`the API key "${caller.name}" is not an admin key: ${action} needs one`)
  request.adminAction = { admin: caller?.name ?? '(open service)', action, ...details }
}
