import type { Writable } from 'node:stream'
import type { RedisClient } from './topology.js'

/**
 * Nagle's rule for one Redis connection: while the connection still has replies to come (Redis is
 * busy with earlier commands anyway), the commands written in the same turn of the event loop are
 * held back and go out together, in one write, when the turn ends (setImmediate: right after Node
 * has handled the I/O that came in together, e.g. the requests of many clients). A connection with
 * nothing in flight writes at once, so a lone request never waits.
 *
 * Under load this is most of the hot path's saving: a write to a loopback socket costs about as much
 * CPU as the rest of a request's Redis call, on both sides (Redis reads and answers a batch at once).
 * Order is kept (the socket's own buffer), and a connection that fails while holding commands back
 * fails them as it fails any command in flight.
 *
 * A Redis Cluster client has no single connection (`stream`): its commands are written at once.
 */
export class WriteCoalescer {
  private held: Writable | undefined

  constructor(private readonly client: RedisClient) {}

  /** Call just before writing a command on the connection. */
  beforeWrite(): void {
    if (this.held) return
    // ioredis' connection (`stream`) and its queue of commands awaiting replies (`commandQueue`).
    const { stream, commandQueue } = this.client as unknown as { stream?: Writable; commandQueue?: { length: number } }
    if (!stream || !commandQueue || commandQueue.length === 0 || !stream.writable) return
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
