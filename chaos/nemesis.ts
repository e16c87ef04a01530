/**
 * The nemesis: a fault schedule drawn up front from the seed (so a seed names the same faults at the
 * same offsets every time), then played against the cluster — one or two faults at a time, each
 * lasting 1–4 s (a quick restart: under a second), then healed.
 *
 * The schedule respects the scenario's limits (targets free, faulty nodes capped); the player checks
 * them again against what really happened (a restart can take longer than planned) and waits, or
 * skips a fault, rather than break them.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster } from './cluster.js'
import { faultKinds, type FaultName, type PlanContext, type Targets } from './faults.js'
import type { ServiceSettings } from './options.js'
import { stream } from './prng.js'
import type { Scenario } from './scenarios.js'

export interface PlannedFault extends Targets {
  id: number
  kind: FaultName
  /** ms after the workload started */
  at: number
  durationMs: number
}

export interface FaultRecord extends PlannedFault {
  /** ms after the workload started; unset when skipped */
  appliedAt?: number
  healedAt?: number
  /** when the heal finished (a restarted node answers, a restarted replica is ready) */
  healDoneAt?: number
  skipped?: string
  error?: string
}

const WARMUP_MS = 2_000
/** Every fault is healed this long before the workload ends. */
const TAIL_MS = 1_500
const MIN_FAULT_MS = 1_000
const MAX_FAULT_MS = 4_000
/** Time a target needs after its heal before the next fault (a node restarts fast, a replica does not). */
const NODE_SETTLE_MS = 500
const REPLICA_SETTLE_MS = 4_000
/** How long the player waits for targets that are still busy before it skips a fault. */
const GUARD_WAIT_MS = 5_000
const PLAN_TRIES = 8

/** A fault that stops or kills its replicas (a cut or a slowed link leaves them running). */
const stopsReplicas = (f: Targets) => f.replicas.length > 0 && !f.cut && !f.latency
const busyUntil = (p: PlannedFault) => p.at + p.durationMs + (stopsReplicas(p) ? REPLICA_SETTLE_MS : NODE_SETTLE_MS)
const range = (n: number) => Array.from({ length: n }, (_, i) => i)

/** What is touched, down and faulty while a set of faults lasts. */
function occupancy(active: readonly Targets[]) {
  const nodes = new Set(active.flatMap((f) => f.nodes))
  const replicas = new Set(active.flatMap((f) => f.replicas))
  const faulty = new Set(active.flatMap((f) => f.faulty))
  const replicasDown = active.filter(stopsReplicas).reduce((n, f) => n + f.replicas.length, 0)
  return { nodes, replicas, faulty, replicasDown }
}

export interface Limits {
  /** nodes faulty at once (the scenario's rule) */
  maxFaulty: number
  /** replicas down at once: all but one when there are several */
  maxReplicasDown: number
}

export const limitsFor = (scenario: Scenario, nodes: number, replicas: number): Limits => ({
  maxFaulty: scenario.maxFaulty(nodes),
  maxReplicasDown: Math.max(1, replicas - 1),
})

function fits(candidate: Targets, active: readonly Targets[], limits: Limits): boolean {
  const now = occupancy(active)
  const next = occupancy([...active, candidate])
  if (candidate.nodes.some((n) => now.nodes.has(n)) || candidate.replicas.some((r) => now.replicas.has(r))) return false
  return next.faulty.size <= limits.maxFaulty && next.replicasDown <= limits.maxReplicasDown
}

export function schedule(opts: {
  seed: number
  durationMs: number
  nodes: number
  replicas: number
  scenario: Scenario
  settings: ServiceSettings
  /** --faults: only these of the scenario's faults (default all of them) */
  faults?: readonly FaultName[] | undefined
}): PlannedFault[] {
  const rng = stream(opts.seed, 'nemesis')
  const choices = opts.scenario.faults(opts.nodes).filter(([, name]) => !opts.faults || opts.faults.includes(name))
  const limits = limitsFor(opts.scenario, opts.nodes, opts.replicas)
  const end = opts.durationMs - TAIL_MS
  const plans: PlannedFault[] = []
  const maxPlans = Math.ceil(opts.durationMs / 250)
  let t = WARMUP_MS
  for (let step = 0; step < maxPlans * 4 && plans.length < maxPlans && t + MIN_FAULT_MS <= end; step++) {
    const active = plans.filter((p) => busyUntil(p) > t)
    // Mostly one fault at a time, sometimes a second one alongside.
    if (active.length >= 2 || (active.length === 1 && !rng.chance(0.35))) {
      t = Math.min(...active.map(busyUntil)) + rng.int(200, 1_200)
      continue
    }
    const used = occupancy(active)
    const ctx: PlanContext = {
      nodes: opts.nodes,
      replicas: opts.replicas,
      majority: Math.floor(opts.nodes / 2) + 1,
      freeNodes: range(opts.nodes).filter((n) => !used.nodes.has(n)),
      freeReplicas: range(opts.replicas).filter((r) => !used.replicas.has(r)),
      killableReplicas: limits.maxReplicasDown - used.replicasDown,
      settings: opts.settings,
    }
    let planned: PlannedFault | undefined
    for (let i = 0; i < PLAN_TRIES && !planned; i++) {
      const kind = rng.weighted(choices)
      const [min, max] = faultKinds[kind].durationMs ?? [MIN_FAULT_MS, MAX_FAULT_MS]
      const durationMs = Math.min(rng.int(min, max), end - t)
      const targets = faultKinds[kind].plan(rng, ctx)
      if (targets && fits(targets, active, limits)) planned = { id: plans.length + 1, kind, at: t, durationMs, ...targets }
    }
    if (planned) plans.push(planned)
    t += rng.int(200, 1_200)
  }
  return plans
}

/** Plays a schedule; resolves once every fault was applied and healed (or skipped). */
export async function playSchedule(
  cluster: Cluster,
  plans: readonly PlannedFault[],
  opts: { startedAt: number; limits: Limits; log: (line: string) => void },
): Promise<FaultRecord[]> {
  const active: FaultRecord[] = []
  const since = () => performance.now() - opts.startedAt

  const play = async (plan: PlannedFault): Promise<FaultRecord> => {
    const record: FaultRecord = { ...plan }
    await sleep(Math.max(0, plan.at - since()))
    const guardUntil = since() + GUARD_WAIT_MS
    while (!fits(plan, active, opts.limits)) {
      if (since() > guardUntil) {
        record.skipped = 'targets still busy or too many faulty nodes (an earlier heal ran late)'
        opts.log(`skip  #${plan.id} ${plan.kind}: ${record.skipped}`)
        return record
      }
      await sleep(50)
    }
    active.push(record)
    const kind = faultKinds[plan.kind]
    try {
      record.appliedAt = since()
      opts.log(`fault #${plan.id} ${plan.kind} ${describeTargets(plan)} for ${plan.durationMs} ms`)
      await kind.apply(cluster, plan)
      await sleep(Math.max(0, record.appliedAt + plan.durationMs - since()))
    } catch (err) {
      record.error = `apply: ${(err as Error).message}`
    }
    try {
      record.healedAt = since()
      await kind.heal(cluster, plan)
      record.healDoneAt = since()
      opts.log(`heal  #${plan.id} ${plan.kind} (took ${(record.healDoneAt - record.healedAt).toFixed(0)} ms)`)
    } catch (err) {
      record.error = [record.error, `heal: ${(err as Error).message.split('\n')[0]}`].filter(Boolean).join('; ')
      opts.log(`ERROR #${plan.id} ${plan.kind}: ${record.error}`)
    } finally {
      active.splice(active.indexOf(record), 1)
    }
    return record
  }

  return Promise.all(plans.map(play))
}

export function describeTargets(t: Targets): string {
  const parts = []
  if (t.nodes.length > 0) parts.push(`node${t.nodes.length > 1 ? 's' : ''} ${t.nodes.join(',')}`)
  if (stopsReplicas(t) || t.latency?.link === 'client') parts.push(`replica ${t.replicas.join(',')}`)
  return `${parts.join(' + ')} (${t.detail})`
}
