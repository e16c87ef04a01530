import type { Writable } from 'node:stream'
import type { RedisClient } from './topology.js'

/**
 * Commands awaiting replies from which a connection holds new ones back: 4 on a lone node, 1 on
 * each node of a quorum. Measured (bench, 2 cores, same-run A/B, req/s ÷ the redis floor at 16 / 64
 * clients): on one node, behind 1 left the service's core idle a tenth of the time (uncontended 0.74
 * / 0.78, against 0.74 / 0.77 behind 4), and behind 8 gained nothing that held up (uncontended 0.85
 * / 0.93 against 0.85 / 0.92 behind 4, contended 0.82 / 0.89 against 0.88 / 0.91). On three nodes
 * every request is three writes, three Redis processes share the cores, and batching saves them all
 * CPU: uncontended N3 ÷ the floor 0.43 / 0.47 behind 4, 0.46 / 0.48 behind 2, 0.48 / 0.53 behind 1
 * (CPU per request: the service 40.7 → 36.8 µs, the three Redis 44.5 → 40.7 µs), 0.41 / 0.41
 * behind 8. The price: one hot key on a quorum, a serial chain of hand-offs where a held write is
 * only delay, does up to 6 % fewer grants per second behind 1 than behind 4.
 */
export function holdBehindFor(nodes: number): number {
  return nodes === 1 ? 4 : 1
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
    // ioredis' connection (`stream`) and its queue of commands awaiting replies (`commandQueue`).
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
