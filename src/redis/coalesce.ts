import type { Writable } from 'node:stream'
import type { RedisClient } from './topology.js'

/**
 * Commands awaiting replies from which a connection holds new ones back: 4 on a lone node, 1 on
 * each node of a quorum. A lone node's Redis has a core to itself, and writing at once lets it work
 * while this process goes on; holding back later than 4 gained nothing that held up. A quorum
 * writes every call to each of its nodes, whose Redis processes share the cores: there batching
 * sooner saves more CPU (here and in every Redis) than it leaves idle. The price is paid by one hot
 * key on a quorum, a serial chain of hand-offs where a held write is only delay: a few per cent
 * fewer grants per second. The same-run A/B figures behind each choice: docs/ARCHITECTURE.md.
 */
export function holdBehindFor(nodes: number): number {
  return nodes === 1 ? 4 : 1
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
 * Nagle's rule for one Redis connection: while Redis still has a backlog of this connection's
 * commands to answer (`holdBehind` or more: it is busy with earlier commands anyway), the commands
 * written in the same turn of the event loop are held back and go out together, in one write, when
 * the turn ends (setImmediate: right after Node has handled the I/O that came in together, e.g. the
 * requests of many clients). With a shorter backlog a command is written at once, so that Redis
 * works on it while this process goes on with the next request (on a machine where a write is cheap,
 * holding back even behind one command left the process idle in between), and a lone request never
 * waits.
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

  constructor(
    private readonly client: RedisClient,
    private readonly holdBehind: number,
  ) {}

  /** Call just before writing a command on the connection. */
  beforeWrite(): void {
    if (this.held) return
    // ioredis' connection (`stream`) and its queue of commands awaiting replies (`commandQueue`): private
    // members, pinned with ioredis' version and guarded by test/internals/private-apis.test.ts.
    const { stream, commandQueue } = this.client as unknown as { stream?: Writable; commandQueue?: { length: number } }
    if (!stream || !commandQueue || commandQueue.length < this.holdBehind || !stream.writable) return
    stream.cork()
    this.held = stream
    setImmediate(this.release)
  }

  private readonly release = (): void => {
    const stream = this.held
    this.held = undefined
    stream?.uncork()
  }
}
