import type { Writable } from 'node:stream'
import type { RedisClient } from './topology.js'

/**
 * When a connection holds its writes back (WriteCoalescer). A turn's first command goes out at once
 * unless Redis already has `holdBehind` of the connection's commands to answer; the turn's later ones
 * are held, and go out together once `batch` of them are held, or when the turn ends.
 *
 * A lone node: `holdBehind` 4, `batch` 4. Its Redis has a core to itself: the first write gets it to
 * work while this process reads the rest of the turn's requests, and a batch of 4 keeps it fed
 * through a burst (holding a burst to the turn's end left it idle meanwhile) while requests that
 * trickle in, one to a few per turn, still share a write. A quorum: `holdBehind` 1, no batch limit.
 * It writes every call to each of its nodes, whose Redis processes share the cores: there batching
 * sooner and wider saves more CPU (here and in every Redis) than it leaves idle, at a few per cent of
 * one hot key's serial chain of hand-offs. The same-run A/B figures behind each choice:
 * docs/ARCHITECTURE.md.
 */
export interface HoldRule {
  holdBehind: number
  batch: number
}

export function holdRuleFor(nodes: number): HoldRule {
  return nodes === 1 ? { holdBehind: 4, batch: 4 } : { holdBehind: 1, batch: Infinity }
}

/**
 * Who batches a node's writes: `ours` (WriteCoalescer, the service's way), `auto` (ioredis'
 * `enableAutoPipelining`, through its public EVALSHA / EVAL commands) or `none`. Not a setting: the
 * bench sets LOCK_SERVICE_BENCH_COALESCING to compare them (`npm run bench -- --coalesce auto`).
 */
export const coalescings = ['ours', 'auto', 'none'] as const
export type Coalescing = (typeof coalescings)[number]

export function coalescingFrom(env: NodeJS.ProcessEnv): Coalescing {
  const given = env.LOCK_SERVICE_BENCH_COALESCING
  if (given === undefined || given === '') return 'ours'
  const known = coalescings.find((c) => c === given)
  if (!known) throw new Error(`LOCK_SERVICE_BENCH_COALESCING must be one of ${coalescings.join(', ')} (got "${given}")`)
  return known
}

/**
 * Nagle's rule for one Redis connection, by turns of the event loop (a turn: the I/O Node handled
 * together, e.g. the requests of many clients, then setImmediate). The turn's first command is
 * written at once, so that Redis works on it while this process goes on with the next request, and a
 * lone request never waits; unless Redis is still busy with a backlog of `holdBehind` of this
 * connection's commands. The commands after it are held back (the socket corked) and go out
 * together, in one write, once `batch` are held or when the turn ends.
 *
 * Where a write to a loopback socket costs about as much CPU as the rest of a request's Redis call,
 * this is most of the hot path's saving under load, on both sides (Redis reads and answers a batch
 * at once).
 * Order is kept (the socket's own buffer), and a connection that fails while holding commands back
 * fails them as it fails any command in flight.
 *
 * A Redis Cluster client has no single connection (`stream`): its commands are written at once.
 */
export class WriteCoalescer {
  private held: Writable | undefined
  private heldCount = 0
  private turnOpen = false

  constructor(
    private readonly client: RedisClient,
    private readonly rule: HoldRule,
  ) {}

  /** Call just before writing a command on the connection. */
  beforeWrite(): void {
    if (this.held) {
      this.heldCount++
      return
    }
    // ioredis' connection (`stream`) and its queue of commands awaiting replies (`commandQueue`): private
    // members, pinned with ioredis' version and guarded by test/internals/private-apis.test.ts.
    const { stream, commandQueue } = this.client as unknown as { stream?: Writable; commandQueue?: { length: number } }
    if (!stream || !commandQueue || !stream.writable) return
    if (!this.turnOpen) {
      this.turnOpen = true
      setImmediate(this.endTurn)
      if (commandQueue.length < this.rule.holdBehind) return
    }
    stream.cork()
    this.held = stream
    this.heldCount = 1
  }

  /** Call just after writing it: a full batch goes out. */
  afterWrite(): void {
    if (this.heldCount >= this.rule.batch) this.release()
  }

  private release(): void {
    const stream = this.held
    this.held = undefined
    this.heldCount = 0
    stream?.uncork()
  }

  private readonly endTurn = (): void => {
    this.turnOpen = false
    this.release()
  }
}
