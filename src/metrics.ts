import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { FastCounter, FastHistogram } from './metrics-fast.js'
import { holdModes, lostReasons, nodeFailureReasons, quorumFailureReasons, vacancyReasons } from './contract/words.js'

/** The outcomes the metrics count by (the other label values are the contract's words). */
export const acquireOutcomes = ['granted', 'held', 'error'] as const
export const renewOutcomes = ['renewed', 'not_found', 'not_owner', 'error'] as const
export const releaseOutcomes = ['released', 'decremented', 'not_found', 'not_owner', 'error'] as const
export const waitOutcomes = ['granted', 'timeout', 'cancelled'] as const
export const keepaliveOutcomes = ['renewed', 'not_found', 'error'] as const
export const campaignOutcomes = ['elected', 'timeout', 'cancelled'] as const
/** Why an HTTPS handshake was refused (src/http/https.ts). */
export const handshakeFailures = ['no_certificate', 'untrusted', 'expired', 'not_tls', 'other'] as const

/**
 * Every metric the service exports, defined in one place, on one registry per app instance.
 * Base units, `_seconds` and `_total` suffixes; labels never carry a lock key, token or address
 * (nodes are labelled by their index in REDIS_URLS). The metrics every request updates are
 * FastHistogram / FastCounter (src/metrics-fast.ts): resolve a series once with `series(labels)`,
 * then update it without label work.
 */
export function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  /** What lock_election_leaderless_seconds reads at each scrape (set by src/locks/election-feeds.ts). */
  const electionLeaderlessProbe = { longest: () => 0 }
  const latencyBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

  const metrics = {
    registry,
    acquireDuration: new FastHistogram({
      name: 'lock_acquire_duration_seconds',
      help: `Time to answer an acquire, by mode and outcome (${acquireOutcomes.join(', ')})`,
      labelNames: ['mode', 'outcome'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    contention: new FastCounter({
      name: 'lock_contention_total',
      help: 'Acquires that found the lock held by another token',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    releases: new FastCounter({
      name: 'lock_releases_total',
      help: `Release requests by mode and outcome (${releaseOutcomes.join(', ')})`,
      labelNames: ['mode', 'outcome'] as const,
      registers: [registry],
    }),
    renewals: new FastCounter({
      name: 'lock_renewals_total',
      help: `Renew requests by mode and outcome (${renewOutcomes.join(', ')})`,
      labelNames: ['mode', 'outcome'] as const,
      registers: [registry],
    }),
    quorumFailures: new Counter({
      name: 'lock_quorum_failures_total',
      help: `Operations the backend could not decide, by reason (${quorumFailureReasons.join(', ')})`,
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    grantsAnsweredLate: new Counter({
      name: 'lock_grants_answered_late_total',
      help: 'Grants whose validity ran out before their answer could be sent (a stopped or starved process): released, answered 503',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    waiters: new Gauge({
      name: 'lock_waiters',
      help: 'Requests parked in line on this replica',
      registers: [registry],
    }),
    waitDuration: new FastHistogram({
      name: 'lock_wait_duration_seconds',
      help: `Time waiting requests spent in line, by mode and outcome (${waitOutcomes.join(', ')})`,
      labelNames: ['mode', 'outcome'] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
      registers: [registry],
    }),
    lockDelayed: new Counter({
      name: 'lock_delayed_total',
      help: "Acquires a lock-delay held back (a hold ended without its holder's release): refused 409 lock_delayed, or kept in line",
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    lockDelay: new Histogram({
      name: 'lock_delay_seconds',
      help: 'How long the lock-delay an acquire met still had to run when it first met it, by mode',
      labelNames: ['mode'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 15, 30, 60],
      registers: [registry],
    }),
    wakeups: new Counter({
      name: 'lock_wakeups_total',
      help: 'Pushes that reached a waiter on this replica: hand-offs (the lock itself) and wake-ups',
      registers: [registry],
    }),
    handoff: new FastHistogram({
      name: 'lock_handoff_seconds',
      help: 'From the push (sent by the release) reaching this replica to the grant being answered',
      buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [registry],
    }),
    httpDuration: new FastHistogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status class',
      labelNames: ['method', 'route', 'status_class'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    nodeUp: new Gauge({
      name: 'redis_node_up',
      help: '1 while the connection to the Redis node is ready, by node index in REDIS_URLS',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    nodeCommandDuration: new FastHistogram({
      name: 'redis_node_command_duration_seconds',
      help: 'Duration of successful commands, by node index',
      labelNames: ['node'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    nodeRestarts: new Counter({
      name: 'redis_node_restarts_total',
      help: 'Restarts seen (run_id changed: the holds on it may be gone), by node index; on a quorum each starts a quarantine',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    nodeClockRate: new Gauge({
      name: 'redis_node_clock_rate',
      help: "The node's clock rate against this replica's monotonic clock (1 = same speed), by node index",
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    nodeClockDistrusted: new Counter({
      name: 'redis_node_clock_distrusted_total',
      help: 'Times a node was distrusted because its clock ran outside DRIFT_FACTOR or stepped, by node index',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    clusterMasters: new Gauge({
      name: 'redis_cluster_masters',
      help: 'REDIS_MODE=cluster: masters serving slots, as this replica sees the cluster (0 in other modes)',
      registers: [registry],
    }),
    clusterMasterUp: new Gauge({
      name: 'redis_cluster_master_up',
      help:
        'REDIS_MODE=cluster: 1 while the master of a shard answered its latest clock sample, by shard ' +
        '(masters in the order of their first slot)',
      labelNames: ['shard'] as const,
      registers: [registry],
    }),
    clusterMasterClockRate: new Gauge({
      name: 'redis_cluster_master_clock_rate',
      help: "REDIS_MODE=cluster: the shard's master's clock rate against this replica's monotonic clock, by shard",
      labelNames: ['shard'] as const,
      registers: [registry],
    }),
    nodeVotes: new Gauge({
      name: 'redis_node_votes',
      help: '1 while the node counts toward a majority (up, identified, not quarantined, clock trusted), by node index',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    nodeQuarantine: new Gauge({
      name: 'redis_node_quarantine_seconds',
      help: 'Seconds until a node that restarted recently counts again (0: not quarantined), by node index',
      labelNames: ['node'] as const,
      registers: [registry],
    }),
    nodeErrors: new Counter({
      name: 'redis_node_errors_total',
      help: `Failed connections and commands by node index and reason (${nodeFailureReasons.join(', ')})`,
      labelNames: ['node', 'reason'] as const,
      registers: [registry],
    }),
    tlsHandshakeFailures: new Counter({
      name: 'http_tls_handshake_failures_total',
      help: `HTTPS handshakes the service refused, by reason (${handshakeFailures.join(', ')})`,
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    sessionsOpened: new Counter({
      name: 'lock_sessions_opened_total',
      help: 'Sessions opened (POST /sessions)',
      registers: [registry],
    }),
    sessionKeepalives: new Counter({
      name: 'lock_session_keepalives_total',
      help: 'Session keepalives by outcome (renewed, not_found: the session lapsed or was closed, error)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    sessionKeepaliveDuration: new Histogram({
      name: 'lock_session_keepalive_duration_seconds',
      help: 'Time to renew a session and every hold bound to it',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    sessionsClosed: new Counter({
      name: 'lock_sessions_closed_total',
      help: 'Sessions ended by DELETE /sessions/:id (their holds released)',
      registers: [registry],
    }),
    sessions: new Gauge({
      name: 'lock_sessions',
      help: 'Live sessions of the service (all replicas), as of the latest census (every 5 s)',
      registers: [registry],
    }),
    sessionExpiries: new Counter({
      name: 'lock_session_expiries_total',
      help: 'Sessions that lapsed without a DELETE (no keepalive in time), counted by the replica whose census found them',
      registers: [registry],
    }),
    watchers: new Gauge({
      name: 'lock_watchers',
      help: 'Watch requests (GET …/watch) parked on this replica',
      registers: [registry],
    }),
    lostNotifications: new Counter({
      name: 'lock_lost_notifications_total',
      help: `Watches answered "gone", by reason (${lostReasons.join(', ')})`,
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    leadersElected: new Counter({
      name: 'lock_election_leaders_total',
      help: 'Terms begun: campaigns answered 201 (a new leader) by this replica',
      registers: [registry],
    }),
    electionVacancies: new Counter({
      name: 'lock_election_vacancies_total',
      help:
        `Terms ended, by reason (${vacancyReasons.join(', ')}): resigned and force_released by the replica that ended it; ` +
        'expired and session_lost by each replica whose observers saw it happen',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    electionObservers: new Gauge({
      name: 'lock_election_observers',
      help: 'Observers (GET /elections/:name/observe, long polls and event streams) on this replica',
      registers: [registry],
    }),
    electionLeaderless: new Gauge({
      name: 'lock_election_leaderless_seconds',
      help: 'The longest time an election observed on this replica has been without a leader (0: every one has a leader)',
      registers: [registry],
      collect() {
        this.set(electionLeaderlessProbe.longest())
      },
    }),
    electionLeaderlessProbe,
    campaignWait: new Histogram({
      name: 'lock_election_campaign_wait_seconds',
      help: `Time a campaign waited in line, by outcome (${campaignOutcomes.join(', ')}); campaigns that did not wait are not counted`,
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'lock_rate_limited_total',
      help: 'Requests refused 429 rate_limited, by API key name ("(open)" for every client of an open service)',
      labelNames: ['key'] as const,
      registers: [registry],
    }),
    streams: new Gauge({
      name: 'lock_streams',
      help: 'Watches and observes (long polls and event streams) open on this replica, counted against MAX_STREAMS_PER_KEY',
      registers: [registry],
    }),
    streamsRefused: new Counter({
      name: 'lock_streams_refused_total',
      help: 'Watches and observes refused 429 too_many_streams, by API key name ("(open)" for every client of an open service)',
      labelNames: ['key'] as const,
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'lock_auth_failures_total',
      help: 'Requests refused 401 unauthorized (no API key, a malformed header, or a key that is not valid)',
      registers: [registry],
    }),
    sessionHoldsLost: new Counter({
      name: 'lock_session_holds_lost_total',
      help: 'Holds a keepalive found no longer bound to their session (released, expired, force-released, re-bound)',
      registers: [registry],
    }),
  }
  return {
    ...metrics,
    // Every waiting grant observes these two: their series resolved once, no label key built per grant.
    waitDurationOf: seriesBy((mode, outcome) => metrics.waitDuration.series({ mode, outcome })),
    handoffSeries: metrics.handoff.series({}),
  }
}

export type Metrics = ReturnType<typeof createMetrics>

/**
 * A metric's series by label values (up to three), each resolved once with `make` (e.g.
 * `histogram.series(...)`) and then found by nested Map lookups: no key string is built per request.
 * Only for label values from a bounded set (modes, outcomes, route patterns, methods, status classes).
 */
export function seriesBy<T>(make: (a: string, b: string, c: string) => T): (a: string, b: string, c?: string) => T {
  const byA = new Map<string, Map<string, Map<string, T>>>()
  return (a, b, c = '') => {
    let byB = byA.get(a)
    if (!byB) byA.set(a, (byB = new Map()))
    let byC = byB.get(b)
    if (!byC) byB.set(b, (byC = new Map()))
    let series = byC.get(c)
    if (!series) byC.set(c, (series = make(a, b, c)))
    return series
  }
}

/** A route and the status codes its contract documents (so: the status classes it can answer). */
export interface DocumentedRoute {
  method: string
  route: string
  statuses: readonly (number | string)[]
}

/**
 * Every series whose label values are known in advance, at 0 from start (mode × outcome, reasons,
 * node index, route × documented status class), so that a dashboard or an alert reads 0 instead of
 * "no data" (and histogram_quantile has buckets) before the first traffic.
 */
export function zeroSeries(metrics: Metrics, nodeCount: number, routes: readonly DocumentedRoute[]): void {
  for (const mode of holdModes) {
    metrics.contention.zero({ mode })
    metrics.grantsAnsweredLate.inc({ mode }, 0)
    for (const outcome of acquireOutcomes) metrics.acquireDuration.zero({ mode, outcome })
    for (const outcome of renewOutcomes) metrics.renewals.zero({ mode, outcome })
    for (const outcome of releaseOutcomes) metrics.releases.zero({ mode, outcome })
    for (const outcome of waitOutcomes) metrics.waitDuration.zero({ mode, outcome })
    metrics.lockDelayed.inc({ mode }, 0)
    metrics.lockDelay.zero({ mode })
  }
  for (const reason of quorumFailureReasons) metrics.quorumFailures.inc({ reason }, 0)
  for (const outcome of keepaliveOutcomes) metrics.sessionKeepalives.inc({ outcome }, 0)
  for (const reason of lostReasons) metrics.lostNotifications.inc({ reason }, 0)
  for (const reason of vacancyReasons) metrics.electionVacancies.inc({ reason }, 0)
  for (const outcome of campaignOutcomes) metrics.campaignWait.zero({ outcome })
  for (let index = 0; index < nodeCount; index++) {
    const node = String(index)
    metrics.nodeCommandDuration.zero({ node })
    metrics.nodeRestarts.inc({ node }, 0)
    metrics.nodeClockDistrusted.inc({ node }, 0)
    for (const reason of nodeFailureReasons) metrics.nodeErrors.inc({ node, reason }, 0)
  }
  for (const { method, route, statuses } of routes) {
    for (const status_class of new Set(statuses.map((s) => `${String(s)[0]}xx`))) metrics.httpDuration.zero({ method, route, status_class })
  }
}
