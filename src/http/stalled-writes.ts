import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { Server as TlsServer } from 'node:tls'

/** How long an answer may sit unsent, with no byte of it taken by the client, before its connection is closed. */
export const STALLED_WRITE_MS = 60_000

/**
 * Closes connections whose client stopped reading: an answer (or a watch's stream) that Node could
 * not hand to the kernel, with no progress for `stallMs`. Nothing else needs a per-connection timer:
 * a request must arrive within BODY_TIMEOUT_MS (Node's own sweep), an idle keep-alive connection
 * closes after keepAliveTimeout, and every long answer (a wait, a watch) is bounded by the service.
 *
 * A sweep over the open connections every `stallMs / 2`, instead of Node's socket timeout: that is a
 * timer per connection, re-armed on every read and write, ~0.2 KB on each of 10,000 parked waiters'
 * sockets. Here a connection costs a set entry and a shared listener; a backed-up one, an entry in
 * `stalled` until it moves or closes. Returns what stops the sweep.
 */
export function closeStalledWrites(server: Server | TlsServer, stallMs = STALLED_WRITE_MS): () => void {
  const open = new Set<Socket>()
  /**
   * Backed-up connections: what Node had yet to hand to the kernel and had dispatched in all when
   * last seen moving, and when. Either changes as the client reads (a write completes, the next is
   * dispatched), in steps of a write's size and of the kernel's buffers.
   */
  const stalled = new Map<Socket, { unsent: number; dispatched: number; since: number }>()
  function forget(this: Socket): void {
    open.delete(this)
    stalled.delete(this)
  }
  const track = (socket: Socket) => {
    open.add(socket)
    socket.on('close', forget)
  }
  // One socket per connection: over TLS the TLS socket ('secureConnection'), whose writes back up;
  // the TCP socket beneath it is never written to by the server itself.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', track)
  const sweep = () => {
    const now = performance.now()
    for (const socket of open) {
      if (socket.writableLength === 0) {
        stalled.delete(socket)
        continue
      }
      const seen = stalled.get(socket)
      const unsent = socket.writableLength
      const dispatched = socket.bytesWritten
      if (!seen || seen.unsent !== unsent || seen.dispatched !== dispatched) stalled.set(socket, { unsent, dispatched, since: now })
      else if (now - seen.since >= stallMs) socket.destroy()
    }
  }
  const timer = setInterval(sweep, Math.max(10, Math.floor(stallMs / 2)))
  timer.unref()
  return () => clearInterval(timer)
}
