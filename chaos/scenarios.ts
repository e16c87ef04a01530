/**
 * Scenarios: which faults the nemesis may draw (with weights), how many nodes may be faulty at once,
 * and whether mutual exclusion is checked. `safe` stays inside Redlock's assumptions, so every
 * overlap is a bug; the others break them on purpose, and then only fences (and the promises that
 * hold whatever the assumptions: no hang, no 500, a live service) must hold.
 */
import type { FaultName } from './faults.js'

export interface Scenario {
  readonly description: string
  readonly nodeCounts: readonly number[]
  /** faults and their weights, for N nodes */
  faults(nodes: number): readonly (readonly [number, FaultName])[]
  /** how many nodes may be faulty at once */
  maxFaulty(nodes: number): number
  /** false: overlaps are reported, not failed */
  readonly exclusionChecked: boolean
  /** 'cluster': the nodes are the shards of a Redis Cluster (each a master with two replicas); default one Redis or a quorum */
  readonly backend?: 'cluster'
  /** Service settings the scenario needs (--env may not override them) */
  readonly serviceEnv?: Readonly<Record<string, string>>
}

const minority = (n: number) => Math.floor((n - 1) / 2)

/** Slowness rather than cuts: a delayed link, a Redis stopped in short bursts, a service replica stopped past the TTLs (about a third of the draws). */
const BEYOND_CUTS: readonly (readonly [number, FaultName])[] = [
  [6, 'latency'],
  [4, 'slow-redis'],
  [4, 'pause-service'],
]

/** Faults a single Redis survives with every guarantee intact. */
const SINGLE_SAFE: readonly (readonly [number, FaultName])[] = [
  [3, 'pause-node'],
  [3, 'partition'],
  [2, 'kill-replica'],
  [2, 'clock-drift'],
  ...BEYOND_CUTS,
]

export const scenarios = {
  safe: {
    description: "faults within Redlock's assumptions: at most a minority of nodes faulty at once, clocks beyond the allowance only there",
    nodeCounts: [1, 3, 5],
    faults: (n) =>
      n === 1
        ? SINGLE_SAFE
        : [
            [3, 'pause-node'],
            [2, 'kill-node'],
            [2, 'restart-node'],
            [3, 'partition'],
            [2, 'kill-replica'],
            [2, 'clock-drift'],
            [2, 'clock-fast'],
            [1, 'clock-step'],
            [1, 'host-crash'],
            ...BEYOND_CUTS,
          ],
    // A single Redis is never "a minority": its safe faults (pause, partition) are harmless alone.
    maxFaulty: (n) => (n === 1 ? 1 : minority(n)),
    exclusionChecked: true,
  },
  'single-restart': {
    description: 'one Redis killed and restarted empty: locks are lost by design (no other node to vote), fences must still increase',
    nodeCounts: [1],
    faults: () => [[3, 'restart-node'], [3, 'kill-node'], [2, 'host-crash'], ...SINGLE_SAFE],
    maxFaulty: () => 1,
    exclusionChecked: false,
  },
  'majority-restart': {
    description: 'a majority of nodes killed and restarted empty at once (beyond Redlock): fences must still increase',
    nodeCounts: [3, 5],
    faults: () => [
      [6, 'kill-majority'],
      [2, 'partition'],
      [2, 'kill-replica'],
      [1, 'pause-node'],
    ],
    maxFaulty: (n) => n,
    exclusionChecked: false,
  },
  'majority-clock': {
    description: 'a clock far outside the allowance on a majority of nodes (beyond Redlock): fences must still increase',
    nodeCounts: [3, 5],
    faults: () => [
      [6, 'clock-fast-majority'],
      [2, 'partition'],
      [2, 'kill-replica'],
      [1, 'pause-node'],
    ],
    maxFaulty: (n) => n,
    exclusionChecked: false,
  },
  'cluster-wait': {
    description:
      'a Redis Cluster of 3 masters with 2 replicas each; masters paused until a replica takes over, REDIS_WAIT_REPLICAS=1: no overlap, fences increase',
    nodeCounts: [3],
    faults: () => [
      [5, 'failover-master'],
      [2, 'kill-replica'],
    ],
    maxFaulty: () => 1,
    exclusionChecked: true,
    backend: 'cluster',
    serviceEnv: { REDIS_WAIT_REPLICAS: '1' },
  },
  'cluster-nowait': {
    description:
      'the same failovers without REDIS_WAIT_REPLICAS: a grant not yet replicated may be lost (overlaps reported, not failed); fences must increase',
    nodeCounts: [3],
    faults: () => [
      [5, 'failover-master'],
      [2, 'kill-replica'],
    ],
    maxFaulty: () => 1,
    exclusionChecked: false,
    backend: 'cluster',
    serviceEnv: { REDIS_WAIT_REPLICAS: '0' },
  },
} satisfies Record<string, Scenario>

export type ScenarioName = keyof typeof scenarios
