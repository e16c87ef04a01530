import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { contend, type ContendStats } from './contenders.js'
import { History } from '../../harness/history.js'
import { request } from '../../harness/http.js'

export interface KillOutcome {
  stats: ContendStats
  history: History
  /** ms from the kill until `probeKey` could be inspected and acquired again (NaN: never, within 15 s) */
  recoveryMs: number
}

/**
 * Clients contend on `keys` through the service at `address` (waiting in line up to 500 ms), and
 * after 1.5 s `kill` takes a Redis master down. A prober measures how long until a lock on
 * `probeKey` (one that lived on the killed master) can be inspected and acquired again. Every hold
 * is recorded for the history checker.
 */
export async function contendThroughKill(opts: {
  address: string
  keys: readonly string[]
  probeKey: string
  kill: () => Promise<void>
  durationMs?: number
}): Promise<KillOutcome> {
  const history = new History()
  let killedAt = 0
  let recoveredAt = 0
  const token = 'failover-prober-token-00000'
  const probe = (async () => {
    await sleep(1500)
    killedAt = performance.now()
    await opts.kill()
    while (performance.now() - killedAt < 15_000) {
      const res = await request(opts.address, 'POST', `/rwlocks/${opts.probeKey}/write?ttl=200`, { token })
      // 200: an earlier probe was answered 503 while its hold was made (its rollback lost in the fault).
      if (res.status === 201 || res.status === 200) {
        await request(opts.address, 'DELETE', `/rwlocks/${opts.probeKey}/write`, { token })
        recoveredAt = performance.now()
        return
      }
      await sleep(20)
    }
  })()
  const stats = await contend({
    baseUrls: [opts.address],
    history,
    keys: opts.keys,
    clients: 12,
    durationMs: opts.durationMs ?? 7000,
    ttlMs: 2000,
    waitMs: 500,
    faults: true,
  })
  await probe
  return { stats, history, recoveryMs: recoveredAt > 0 ? recoveredAt - killedAt : NaN }
}
