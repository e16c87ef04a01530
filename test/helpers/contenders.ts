import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Config } from '../../src/config.js'
import { startListening, type TestApp } from '../../harness/app.js'
import { CUT_SHARE, History, type HoldMode } from '../../harness/history.js'
import { request } from '../../harness/http.js'
import { startRedisCluster, type Teardown } from '../../harness/redis-server.js'
import { startReplicas, type ServiceProcess } from '../../harness/service-process.js'

export interface ContendOptions {
  /** Service base URLs; client i talks to baseUrls[i % n] (several replicas share one backend). */
  baseUrls: readonly string[]
  keys: readonly string[]
  clients: number
  durationMs: number
  ttlMs: number
  history: History
  /** For /rwlocks: the mode of each attempt (default: exclusive /locks). */
  pickMode?: (client: number) => HoldMode
  /** For /semaphores (every attempt): the limit, and the permits each attempt of a client asks for. */
  semaphore?: { limit: number; permits: (client: number) => number }
  /** How long a holder keeps the lock, ms (default 0–2 ms at random). */
  holdMs?: () => number
  /** Pause after each release before the next attempt, ms (default none). */
  thinkMs?: () => number
  /** Wait in line up to this long on each attempt (default 0: try once). */
  waitMs?: number
  /**
   * Bind every hold to a session of the client's (its TTL: ttlMs), and release every other hold by
   * closing the session (then opening a new one) instead of by its token.
   */
  sessions?: boolean
  /**
   * A fault makes the backend unavailable for a while (a failover). A release answered 503 is counted
   * in `unavailable`, not `unexpected`, and sent again (for up to 3 s) as a careful client would (the
   * client stopped using the lock when it first sent it). An acquire answered 200 is a grant too: an
   * earlier attempt of this client was answered 503 while its hold was made, and its rollback was
   * lost in the fault, so the hold is this client's (with that hold's fence) and it is told so now.
   */
  faults?: boolean
}

export interface ContendStats {
  grants: number
  /** Grants per client name (a client never granted is absent). */
  grantsPerClient: Map<string, number>
  grantsByMode: Partial<Record<HoldMode, number>>
  conflicts: number
  unavailable: number
  /**
   * Renews and releases answered 404/409 before the window the client believed it had ran out: the
   * hold was lost within its validity. With `faults` counted here (a failover may lose holds); without,
   * in `unexpected` too.
   */
  lost: number
  /** Grants that arrived after a third of their validity, re-anchored by a renew at once (see History). */
  reanchored: number
  /** Any other status: the contention test fails on these. */
  unexpected: string[]
}

/**
 * Clients that loop acquire → hold → release on a few hot keys for a while, recording every grant
 * (with the timings the history checker needs) and counting every refusal.
 */
export async function contend(options: ContendOptions): Promise<ContendStats> {
  const stats: ContendStats = {
    grants: 0,
    grantsPerClient: new Map(),
    grantsByMode: {},
    conflicts: 0,
    unavailable: 0,
    lost: 0,
    reanchored: 0,
    unexpected: [],
  }
  const deadline = performance.now() + options.durationMs
  const holdMs = options.holdMs ?? (() => Math.random() * 2)

  const client = async (index: number) => {
    const base = options.baseUrls[index % options.baseUrls.length]!
    const name = `client-${index}`
    const token = `contender-${index}-${'x'.repeat(16)}`
    const openSession = async () => {
      const opened = await request(base, 'POST', '/sessions', { body: { ttlMs: options.ttlMs } })
      if (opened.status !== 201) stats.unexpected.push(`open session ${opened.status}: ${JSON.stringify(opened.body)}`)
      return opened.body.id as string
    }
    let session = options.sessions ? await openSession() : undefined
    let round = 0
    while (performance.now() < deadline) {
      const key = options.keys[Math.floor(Math.random() * options.keys.length)]!
      const sem = options.semaphore
      const mode = sem ? 'permit' : (options.pickMode?.(index) ?? 'exclusive')
      const permits = sem?.permits(index) ?? 0
      const path = sem ? `/semaphores/${key}` : mode === 'exclusive' ? `/locks/${key}` : `/rwlocks/${key}/${mode}`
      const requestStartedAt = performance.now()
      const wait = options.waitMs ? `&wait=${options.waitMs}` : ''
      const weight = sem ? `&limit=${sem.limit}&permits=${permits}` : ''
      const bound = session ? `&session=${session}` : ''
      const res = await request(base, 'POST', `${path}?ttl=${options.ttlMs}${wait}${weight}${bound}`, { token })
      const responseAt = performance.now()
      if (res.status === 201 || (res.status === 200 && options.faults)) {
        if (sem && (res.body.permits !== permits || res.body.limit !== sem.limit))
          stats.unexpected.push(`grant of other permits: ${JSON.stringify(res.body)}`)
        stats.grants++
        stats.grantsPerClient.set(name, (stats.grantsPerClient.get(name) ?? 0) + 1)
        stats.grantsByMode[mode] = (stats.grantsByMode[mode] ?? 0) + 1
        let end = requestStartedAt + (res.body.validityMs as number)
        /** A renew or release told "not held" before the believed window ran out: the hold was lost within its validity. */
        const noteLost = (what: string, answer: { status: number; body: Record<string, unknown> }, sentAt: number, gone: boolean) => {
          if (!gone || sentAt >= end || performance.now() > end) return
          stats.lost++
          if (!options.faults) stats.unexpected.push(`${what} ${answer.status} within the hold's validity: ${JSON.stringify(answer.body)}`)
        }
        const notHeld = (answer: { status: number }) => answer.status === 404 || answer.status === 409
        // A grant after a long wait: its validity counts from the hand-off, not from the request, so
        // a renew re-anchors the window (as lockctl does) before the hold is used.
        let reanchored: { sentAt: number; validityMs: number } | undefined
        if (responseAt - requestStartedAt > (res.body.validityMs as number) * CUT_SHARE) {
          const sentAt = performance.now()
          const renewed = session
            ? await request(base, 'PUT', `/sessions/${session}/keepalive`)
            : await request(base, 'PUT', `${path}/renew`, { token })
          const kept =
            renewed.status === 200 && (!session || (renewed.body.holds as { key: string }[] | undefined)?.some((h) => h.key === key))
          if (kept) {
            reanchored = { sentAt, validityMs: renewed.body.validityMs as number }
            end = sentAt + reanchored.validityMs
            stats.reanchored++
          } else if (![200, 404, 409, 503].includes(renewed.status)) {
            stats.unexpected.push(`re-anchoring renew ${renewed.status}: ${JSON.stringify(renewed.body)}`)
          } else {
            noteLost('re-anchoring renew', renewed, sentAt, renewed.status !== 503)
          }
        }
        const hold = holdMs()
        if (hold > 0) await sleep(hold)
        const releaseSentAt = performance.now()
        options.history.recordGrant({
          key,
          namespace: sem ? 'semaphores' : mode === 'exclusive' ? 'locks' : 'rwlocks',
          mode,
          // What the client asked for (a grant that says otherwise is unexpected).
          ...(sem ? { permits, limit: sem.limit } : {}),
          client: name,
          fence: res.body.fence as number,
          requestStartedAt,
          responseAt,
          validityMs: res.body.validityMs as number,
          releaseSentAt,
          ...(reanchored ? { reanchored } : {}),
        })
        if (session && ++round % 2 === 0) {
          // Closing the session releases the hold (and hands it over); the next holds use a new one.
          const closed = await request(base, 'DELETE', `/sessions/${session}`)
          noteLost('close session', closed, releaseSentAt, closed.status === 404)
          if (closed.status !== 200 && closed.status !== 404)
            stats.unexpected.push(`close ${closed.status}: ${JSON.stringify(closed.body)}`)
          session = await openSession()
        } else {
          let released = await request(base, 'DELETE', path, { token })
          for (let tries = 0; released.status === 503 && options.faults && tries < 60; tries++) {
            stats.unavailable++
            await sleep(50)
            released = await request(base, 'DELETE', path, { token })
          }
          // 404 / 409 not_owner: the hold lapsed first (and someone else may hold the lock now); a
          // loss if answered while its window was still open.
          noteLost('release', released, releaseSentAt, notHeld(released))
          const lapsed = released.status === 404 || released.body.error === 'not_owner'
          if (released.status !== 200 && !lapsed) stats.unexpected.push(`release ${released.status}: ${JSON.stringify(released.body)}`)
        }
        const think = options.thinkMs?.() ?? 0
        if (think > 0) await sleep(think)
      } else if (res.status === 409) {
        stats.conflicts++
        await sleep(Math.random() * 3)
      } else if (res.status === 503) {
        stats.unavailable++
        await sleep(20)
      } else {
        stats.unexpected.push(`acquire ${res.status}: ${JSON.stringify(res.body)}`)
      }
    }
  }
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i)))
  return stats
}

type Contention = Omit<ContendOptions, 'baseUrls' | 'history'>

/** `contend` against a new app (in this process, listening on a free port) on `nodes` new redis-servers. */
export async function contendOnNewApp(
  t: Teardown,
  nodes: number,
  options: Contention,
  overrides: Partial<Config> = {},
): Promise<{ app: TestApp['app']; stats: ContendStats; history: History }> {
  const redis = await startRedisCluster(nodes, { t })
  const { app, address } = await startListening(
    t,
    redis.map((r) => r.url),
    { logLevel: 'warn', ...overrides },
  )
  const history = new History()
  return { app, stats: await contend({ ...options, baseUrls: [address], history }), history }
}

/** `contend` through two new service processes (clients alternate between them) on `nodes` new redis-servers. */
export async function contendOnNewReplicas(
  t: Teardown,
  nodes: number,
  options: Contention,
  env: Record<string, string> = {},
): Promise<{ replicas: [ServiceProcess, ServiceProcess]; stats: ContendStats; history: History }> {
  const redis = await startRedisCluster(nodes, { t })
  const replicas = await startReplicas(
    redis.map((r) => r.url),
    { t, env },
  )
  const history = new History()
  return { replicas, stats: await contend({ ...options, baseUrls: replicas.map((r) => r.url), history }), history }
}
