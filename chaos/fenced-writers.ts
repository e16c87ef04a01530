/**
 * Clients that write through a protected resource, beside the main workload: each takes a lock, writes
 * at once while its validity lasts, and half the time sleeps past its validity and then writes again —
 * the paused client fences exist for. Two resource models, each on a key of its own:
 *
 * - **store**: the resource stores the highest fence it has accepted and refuses a smaller one
 *   (Kleppmann's fix). A stale write accepted there would mean fences out of grant order: a violation.
 * - **check**: the resource cannot store anything; it asks `GET /locks/:key/fence/:fence` and, when
 *   current, applies the write after a short write window (0–30 ms, its network and disk). A check is a
 *   snapshot, so a stale write can land: counted and reported, not failed.
 *
 * A write is **stale** when it is applied after the resource applied a write that a newer hold made
 * within its validity — newer: its acquire was sent after the writer's grant had arrived, so the
 * service certainly granted it later (holds granted later although asked for earlier, after a wait in
 * line, are not counted: the count is a lower bound). Every hold is also recorded in the history checker.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { History } from '../harness/history.js'
import { request, type HttpResult } from '../harness/http.js'
import type { ServiceSettings } from './options.js'
import { stream, type Rng } from './prng.js'

export type ResourceModel = 'store' | 'check'

export interface FencedCounts {
  /** holds granted to these writers */
  holds: number
  /** writes sent while the writer was within its validity, and how many the resource refused */
  validWrites: number
  validRefused: number
  /** writes sent after the writer slept past its validity, and how many the resource accepted */
  lateWrites: number
  lateAccepted: number
  /** writes applied after a newer hold's write had been applied */
  staleAccepted: number
  /** writes sent when a newer hold had already written (stale when sent), and how many of them the resource refused */
  staleAttempted: number
  staleRefused: number
  /** check: fence checks that did not answer 200 (the write is refused then) */
  checkErrors: number
  examples: string[]
}

export type FencedStats = Record<ResourceModel, FencedCounts>

export interface FencedOptions {
  seed: number
  durationMs: number
  settings: ServiceSettings
  replicaUrl: (r: number) => string
  replicas: number
  history: History
  startedAt: number
  /** writers per resource model */
  writers?: number
}

/** The resource's write window after a check: how long the write takes to land. */
const WRITE_WINDOW_MS = 30
const SLACK_MS = 2_000
const EXAMPLES = 3

/** What one key of a resource has applied: the newest of the holds whose writes within validity it applied (by acquire sent). */
interface Applied {
  newestSentAt: number
  newestFence: number
}

/** One resource: the store keeps the highest fence; both keep what they applied, to judge staleness. */
class Resource {
  private highest = 0
  private readonly applied: Applied = { newestSentAt: -Infinity, newestFence: 0 }

  constructor(
    readonly model: ResourceModel,
    private readonly counts: FencedCounts,
  ) {}

  /** Whether a newer hold (asked for after this grant arrived at `grantAt`) has written already. */
  staleFor(grantAt: number): boolean {
    return this.applied.newestSentAt > grantAt
  }

  /** Applies a write of the hold asked for at `sentAt` and granted at `grantAt` with `fence`, if the model lets it. */
  apply(w: { fence: number; sentAt: number; grantAt: number; at: number; story: string; valid: boolean }): boolean {
    if (this.model === 'store') {
      if (w.fence < this.highest) return false
      this.highest = w.fence
    }
    // A newer hold (asked for after this writer's grant arrived) has written already: this write is stale.
    if (this.applied.newestSentAt > w.grantAt) {
      this.counts.staleAccepted++
      if (this.counts.examples.length < EXAMPLES) {
        this.counts.examples.push(
          `${w.story}: fence ${w.fence} applied at ${w.at.toFixed(0)} ms after fence ${this.applied.newestFence} (asked for after this grant arrived) had written`,
        )
      }
    }
    if (w.valid && w.sentAt > this.applied.newestSentAt) Object.assign(this.applied, { newestSentAt: w.sentAt, newestFence: w.fence })
    return true
  }
}

const emptyCounts = (): FencedCounts => ({
  holds: 0,
  validWrites: 0,
  validRefused: 0,
  lateWrites: 0,
  lateAccepted: 0,
  staleAccepted: 0,
  staleAttempted: 0,
  staleRefused: 0,
  checkErrors: 0,
  examples: [],
})

export async function runFencedWriters(o: FencedOptions): Promise<FencedStats> {
  const stats: FencedStats = { store: emptyCounts(), check: emptyCounts() }
  const resources = { store: new Resource('store', stats.store), check: new Resource('check', stats.check) }
  const deadline = o.startedAt + o.durationMs
  const ttlMax = Math.min(1_500, o.settings.maxTtlMs)
  const waitMax = Math.min(2_500, o.settings.maxWaitMs)
  const timeoutMs = (waitMs: number) => waitMs + 3 * o.settings.nodeTimeoutMs + SLACK_MS
  const rel = (t: number) => t - o.startedAt
  const send = (rng: Rng, method: string, path: string, token: string, waitMs = 0): Promise<HttpResult | undefined> =>
    request(o.replicaUrl(rng.int(0, o.replicas - 1)), method, path, { token, timeoutMs: timeoutMs(waitMs) }).catch(() => undefined)

  /** One write through `model`'s resource; whether it was applied. A write stale when sent and not applied is counted refused. */
  const write = async (rng: Rng, model: ResourceModel, key: string, w: Omit<Parameters<Resource['apply']>[0], 'at'>): Promise<boolean> => {
    const stale = resources[model].staleFor(w.grantAt)
    if (stale) stats[model].staleAttempted++
    const applied = await tryWrite(rng, model, key, w)
    if (stale && !applied) stats[model].staleRefused++
    return applied
  }
  const tryWrite = async (rng: Rng, model: ResourceModel, key: string, w: Omit<Parameters<Resource['apply']>[0], 'at'>) => {
    if (model === 'check') {
      const res = await send(rng, 'GET', `/locks/${key}/fence/${w.fence}`, '')
      if (res?.status !== 200) {
        stats.check.checkErrors++
        return false
      }
      if (res.body.current !== true) return false
      await sleep(rng.int(0, WRITE_WINDOW_MS))
    }
    return resources[model].apply({ ...w, at: rel(performance.now()) })
  }

  const writer = async (model: ResourceModel, index: number) => {
    const rng = stream(o.seed, `fenced-${model}-${index}`)
    const counts = stats[model]
    const key = `chaos-fenced-${model}`
    for (let attempt = 0; performance.now() < deadline; attempt++) {
      const token = `chaos-f${model}${index}-a${attempt}-`.padEnd(24, 'x')
      const ttlMs = rng.int(300, ttlMax)
      const waitMs = rng.chance(0.5) ? rng.int(200, waitMax) : 0
      const sentAt = performance.now()
      const grant = await send(rng, 'POST', `/locks/${key}?ttl=${ttlMs}${waitMs ? `&wait=${waitMs}` : ''}`, token, waitMs)
      const grantAt = performance.now()
      if (grant?.status !== 201) {
        await sleep(rng.int(grant?.status === 409 ? 5 : 50, grant?.status === 409 ? 30 : 150))
        continue
      }
      counts.holds++
      const fence = grant.body.fence as number
      const validityMs = grant.body.validityMs as number
      const validEnd = sentAt + validityMs
      const story = `${model} writer ${index} (ttl ${ttlMs}, validity ${validityMs})`
      const hold = { fence, sentAt: rel(sentAt), grantAt: rel(grantAt), story }
      // A correct client acts only within its validity.
      if (performance.now() < validEnd) {
        counts.validWrites++
        if (!(await write(rng, model, key, { ...hold, valid: true }))) counts.validRefused++
      }
      const pauses = rng.chance(0.5)
      if (pauses) {
        // Mostly just past the validity; a third of the pauses long enough (up to 1.5 s) that a newer holder has surely written.
        await sleep(Math.max(0, validEnd - performance.now()) + (rng.chance(1 / 3) ? rng.int(300, 1_500) : rng.int(0, 300)))
        counts.lateWrites++
        if (await write(rng, model, key, { ...hold, valid: false })) counts.lateAccepted++
      }
      const releaseAt = performance.now()
      o.history.record({
        key,
        namespace: 'locks',
        mode: 'exclusive',
        client: story,
        fence,
        start: rel(grantAt),
        end: rel(Math.min(releaseAt, validEnd)),
        requestStartedAt: rel(sentAt),
        validity: { from: rel(sentAt), ms: validityMs },
      })
      await send(rng, 'DELETE', `/locks/${key}`, token)
      await sleep(rng.int(0, 20))
    }
  }

  const writers = o.writers ?? 3
  await Promise.all((['store', 'check'] as const).flatMap((model) => Array.from({ length: writers }, (_, i) => writer(model, i))))
  return stats
}

/**
 * The verdicts: in the store model a stale write accepted, or a write within validity refused, is a
 * violation where the scenario promises exclusion (`strict`), else a note; the check model's are counted.
 */
export function fencedVerdicts(stats: FencedStats, strict: boolean): { violations: string[]; notes: string[]; lines: string[] } {
  const violations: string[] = []
  const notes: string[] = []
  const { store, check } = stats
  const flag = (line: string) =>
    (strict ? violations : notes).push(strict ? line : `${line} (beyond Redlock's assumptions: reported, not failed)`)
  if (store.staleAccepted > 0) flag(`${store.staleAccepted} stale writes accepted by the resource that stores the highest fence`)
  if (store.validRefused > 0)
    flag(`${store.validRefused} writes within their validity refused by the resource that stores the highest fence`)
  if (store.holds === 0 || check.holds === 0) notes.push('a fenced-resource writer was never granted a hold: its model proves nothing')
  const line = (name: string, c: FencedCounts) =>
    `  ${name}: ${c.holds} holds; ${c.validWrites} writes within validity (${c.validRefused} refused); ` +
    `${c.lateWrites} after sleeping past validity (${c.lateAccepted} accepted); ` +
    `stale writes attempted: ${c.staleAttempted} (${c.staleRefused} refused), accepted: ${c.staleAccepted}` +
    (name.startsWith('check') ? `; checks that failed: ${c.checkErrors}` : '')
  const lines = [
    'fenced resources (writers that sleep past their validity, then write):',
    line('stores the highest fence', store),
    line(`checks the fence (write window 0–${WRITE_WINDOW_MS} ms)`, check),
    ...[...store.examples, ...check.examples].map((e) => `    ${e}`),
  ]
  return { violations, notes, lines }
}
