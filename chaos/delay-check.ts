/**
 * The lock-delay check (issue #30): after a hold with a lock-delay ends without its holder's release,
 * no conflicting hold of its key is granted until its delay has passed.
 *
 * From the client's side: the hold's believed window ends at `end` (its validity: at or before the
 * hold's expiry on the nodes), so a delay that works grants nothing conflicting before `end + delayMs`,
 * and such a grant's answer (after the grant) arrives no earlier. A grant asked for after the delayed
 * hold was answered and answered before `end + delayMs` broke the delay — or overlapped the hold
 * itself, which the history checker reports. Semaphores' holds are left out (a delay there keeps
 * permits, not the key: the history's permit count covers what they hold).
 */
import type { HoldMode } from '../harness/history.js'

/** A hold with a lock-delay whose holder never released it (abandoned, or released after it lapsed: 404). */
export interface DelayedEnd {
  key: string
  namespace: string
  mode: HoldMode
  /** ms after the workload's start: when the hold was answered, and when its believed window ended */
  start: number
  end: number
  delayMs: number
}

/** Any hold granted: when it was asked for and answered (ms after the workload's start). */
export interface GrantSeen {
  key: string
  namespace: string
  mode: HoldMode
  at: number
  doneAt: number
}

export interface DelayBreach {
  held: DelayedEnd
  grant: GrantSeen
}

/** Redis ms rounding of the expiry and of the delay's end. */
const ROUNDING_MS = 2

/** Whether a new hold in `mode` is kept out by the delay of a hold in `held` (a read hold's keeps out writers only). */
function keptOut(held: HoldMode, mode: HoldMode): boolean {
  if (held === 'permit' || mode === 'permit') return false
  return held !== 'read' || mode !== 'read'
}

export function delayBreaches(ends: readonly DelayedEnd[], grants: readonly GrantSeen[]): DelayBreach[] {
  const byKey = new Map<string, GrantSeen[]>()
  for (const g of grants) {
    const id = `${g.namespace}/${g.key}`
    byKey.set(id, [...(byKey.get(id) ?? []), g])
  }
  const breaches: DelayBreach[] = []
  for (const held of ends) {
    for (const grant of byKey.get(`${held.namespace}/${held.key}`) ?? []) {
      if (!keptOut(held.mode, grant.mode) || grant.at < held.start) continue
      if (grant.doneAt > held.end && grant.doneAt < held.end + held.delayMs - ROUNDING_MS) breaches.push({ held, grant })
    }
  }
  return breaches
}
