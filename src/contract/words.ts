/**
 * The words the service answers with, each list written once: the zod enums (and so openapi.yaml),
 * the metric label values, the engine's types and the history checker are all built from these.
 * The order of each list is the order openapi.yaml shows.
 */

/** Whether `value` is one of `words` (narrowing it to them). */
export function isWordOf<Word extends string>(words: readonly Word[], value: string): value is Word {
  return (words as readonly string[]).includes(value)
}

/** The kinds of hold, as their families of routes (/locks, /rwlocks, /semaphores, /elections), with the modes of each. */
export const modesOf = {
  locks: ['exclusive'],
  rwlocks: ['read', 'write'],
  semaphores: ['permit'],
  elections: ['leader'],
} as const
export type HoldResource = keyof typeof modesOf

/** The mode of every hold: exclusive (/locks), read or write (/rwlocks), permit (/semaphores), leader (/elections). */
export const holdModes = [...modesOf.locks, ...modesOf.rwlocks, ...modesOf.semaphores, ...modesOf.elections] as const
export type HoldMode = (typeof holdModes)[number]

/**
 * The vote rule's verdict on a node: its answers count toward a majority (grants, hand-offs,
 * renewals, fence commits, inspection) only while it is `counts`: connected, identified as a master
 * whose restart history is known, outside its delayed-restart quarantine, and with a trusted clock.
 */
export const voteStates = ['counts', 'down', 'identifying', 'replica', 'quarantined', 'clock_untrusted'] as const
export type VoteState = (typeof voteStates)[number]

/** How a node's clock compares with this replica's monotonic clock. */
export const clockStates = ['unknown', 'trusted', 'untrusted'] as const
export type ClockState = (typeof clockStates)[number]

/** Why a Redis node cannot be used (/readyz, 503 bodies, redis_node_errors_total). */
export const nodeFailureReasons = ['auth', 'refused', 'timeout', 'not_redis', 'replica', 'tls', 'other'] as const
export type NodeFailureReason = (typeof nodeFailureReasons)[number]

/** Why the nodes could not decide an operation (a 503's reason, lock_quorum_failures_total). */
export const quorumFailureReasons = ['no_majority', 'validity_expired', 'fence_not_stored'] as const
export type QuorumFailureReason = (typeof quorumFailureReasons)[number]

/** Why a watched hold (or session) went. */
export const lostReasons = ['expired', 'released', 'force_released', 'session_lost'] as const
export type LostReason = (typeof lostReasons)[number]

/** Why an election's term ended (observe's `vacant` event, lock_election_vacancies_total). */
export const vacancyReasons = ['resigned', 'expired', 'force_released', 'session_lost'] as const
export type VacancyReason = (typeof vacancyReasons)[number]

/** The events an election's observers are sent (GET /elections/:name/observe). */
export const electionEvents = ['elected', 'proclaimed', 'vacant', 'resync'] as const
export type ElectionEvent = (typeof electionEvents)[number]
