import type { ClockState } from '../contract/words.js'

/**
 * Whether a Redis node's clock can be trusted. Every node decides expiry with its own clock (Lua
 * TIME, PEXPIRE): one that runs fast or jumps ahead frees locks early, and with it in a majority a
 * second majority can form. Redlock assumes bounded drift; this checks it.
 *
 * Each sample is one TIME answer and the service's monotonic clock when it was sent and received:
 * the node read its clock somewhere in between. Between any two samples the node's clock must have
 * advanced by the service's elapsed time within the drift allowance (DRIFT_FACTOR) — with the send
 * and receive times as bounds, so a slow answer (a paused node, a busy event loop) widens the window
 * instead of raising a false alarm. A node that breaks that is distrusted until its clock has
 * behaved for `probationMs` (MAX_TTL_MS + MAX_LOCK_DELAY_MS: every hold granted under the bad clock,
 * and the lock-delay after it, has lapsed by then).
 */

export interface ClockSample {
  /** performance.now() when TIME was sent / its answer arrived */
  sentAt: number
  receivedAt: number
  /** the node's clock, ms (from TIME's seconds and microseconds) */
  nodeMs: number
}

export interface ClockStatus {
  state: ClockState
  /** node clock advance ÷ service clock advance over the samples kept (null until two samples) */
  rate: number | null
  /** ms until an untrusted clock counts again if it keeps behaving (0 when trusted) */
  trustedInMs: number
}

/** What a new sample changed, for logs and metrics. */
export type ClockChange = 'distrusted' | 'trusted' | undefined

/** How far back samples are compared (a small rate error shows only over a longer span). */
const KEEP_MS = 30_000
/** TIME has µs resolution; 1 ms covers rounding on both sides. */
const SLACK_MS = 1

export class ClockWatch {
  private samples: ClockSample[] = []
  private untrustedUntil = 0
  private everSampled = false
  /** Trust as of the previous sample: what `add` reports changes against. */
  private wasTrusted = false
  /** The rate measured up to the latest violation (the samples restart there). */
  private rateBefore: number | null = null
  /** Why it was last distrusted (for the log line). */
  lastViolation: string | undefined
  /** Bumped by every sample: what a cached verdict of `trusted` was read against (RedisNode.vote). */
  samplesTaken = 0

  constructor(
    private readonly driftFactor: number,
    private readonly probationMs: number,
  ) {}

  /** Add a sample; returns whether the node just lost or regained trust. */
  add(sample: ClockSample, now = sample.receivedAt): ClockChange {
    const { wasTrusted } = this
    const hadSamples = this.everSampled
    this.samplesTaken++
    this.everSampled = true
    const violation = this.samples.map((earlier) => this.check(earlier, sample)).find((v) => v !== undefined)
    if (violation !== undefined) {
      this.lastViolation = violation
      this.rateBefore = rateBetween(this.samples[this.samples.length - 1], sample)
      this.untrustedUntil = now + this.probationMs
      // The new sample is the reference from now on: a clock that stepped once and then runs true
      // earns its trust back; one that keeps running fast keeps failing against it.
      this.samples = [sample]
    } else {
      this.samples.push(sample)
      while (this.samples.length > 2 && (this.samples[0] as ClockSample).receivedAt < now - KEEP_MS) this.samples.shift()
    }
    const isTrusted = this.trusted(now)
    this.wasTrusted = isTrusted
    if (wasTrusted && !isTrusted) return 'distrusted'
    if (!wasTrusted && isTrusted && hadSamples) return 'trusted'
    return undefined
  }

  /** Trusted once sampled at least once and not in probation after a violation. */
  trusted(now: number): boolean {
    return this.everSampled && now >= this.untrustedUntil
  }

  status(now: number): ClockStatus {
    const state: ClockState = !this.everSampled ? 'unknown' : this.trusted(now) ? 'trusted' : 'untrusted'
    return { state, rate: this.rate(), trustedInMs: Math.max(0, Math.ceil(this.untrustedUntil - now)) }
  }

  /** Node clock rate against the service's over the samples kept (midpoints); after a violation, across it. */
  rate(): number | null {
    return rateBetween(this.samples[0], this.samples[this.samples.length - 1]) ?? this.rateBefore
  }

  private check(earlier: ClockSample, later: ClockSample): string | undefined {
    const advanced = later.nodeMs - earlier.nodeMs
    const atLeast = Math.max(0, later.sentAt - earlier.receivedAt)
    const atMost = later.receivedAt - earlier.sentAt
    const went = `its clock advanced ${advanced.toFixed(1)} ms while`
    if (advanced > atMost * (1 + this.driftFactor) + SLACK_MS) {
      return `${went} at most ${atMost.toFixed(1)} ms passed here (allowed: ×${1 + this.driftFactor})`
    }
    if (advanced < atLeast * (1 - this.driftFactor) - SLACK_MS) {
      return `${went} at least ${atLeast.toFixed(1)} ms passed here (allowed: ×${1 - this.driftFactor})`
    }
    return undefined
  }
}

function rateBetween(first: ClockSample | undefined, last: ClockSample | undefined): number | null {
  if (!first || !last || first === last) return null
  const elapsed = (last.sentAt + last.receivedAt) / 2 - (first.sentAt + first.receivedAt) / 2
  return elapsed > 0 ? (last.nodeMs - first.nodeMs) / elapsed : null
}
