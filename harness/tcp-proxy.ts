/**
 * A loopback TCP proxy in front of one target (usually a redis-server), for network faults:
 * put one between a service and a Redis node, then cut it ('reset' or 'silent') and heal it.
 *
 * Each accepted connection dials the target anew, so the target may be restarted on the same port
 * behind a live proxy. Bytes are forwarded as they come (with backpressure), never inspected.
 */
import net from 'node:net'
import type { Teardown } from './redis-server.js'

export interface TcpProxy {
  readonly port: number
  /** `redis://127.0.0.1:${port}` */
  readonly url: string
  /** `127.0.0.1:${port}` */
  readonly address: string
  /** 'reset': destroy every open connection (both sides) and refuse new ones (accept then destroy at once) until heal().
   *  'silent': keep every socket open but forward nothing either way (bytes are dropped), new connections are accepted and likewise stalled, until heal(). */
  cut(how: 'reset' | 'silent'): void
  /** Forward again. Connections stalled by 'silent' are destroyed on heal (their streams are corrupt); new ones work. */
  heal(): void
  /** The next bytes the target sends to a client are dropped and that connection is closed (both sides): the request
   *  reached the target, its answer never reaches the client. */
  dropNextResponse(): void
  readonly isCut: boolean
  close(): Promise<void>
}

/** One proxied connection: the accepted socket and the one dialled to the target (none while stalled). */
interface Pair {
  readonly client: net.Socket
  upstream: net.Socket | undefined
  /** Set by a 'silent' cut: bytes either way are read and dropped; the pair dies on heal(). */
  stalled: boolean
}

/** Close at once. (Not resetAndDestroy: on Node 20 it leaves a handle that keeps the test process alive.) */
function abort(socket: net.Socket | undefined): void {
  if (!socket || socket.destroyed) return
  socket.destroy()
}

/** Forward `from` → `to` unless the pair is stalled or `intercept` takes the chunk; pause `from` while `to` is backed up. */
function forward(pair: Pair, from: net.Socket, to: () => net.Socket | undefined, intercept?: () => boolean): void {
  from.on('data', (chunk: Buffer) => {
    const target = to()
    if (pair.stalled || !target || target.destroyed || intercept?.()) return // dropped
    if (!target.write(chunk)) {
      from.pause()
      target.once('drain', () => from.resume())
    }
  })
  from.on('end', () => {
    if (!pair.stalled) to()?.end()
  })
}

class LoopbackProxy implements TcpProxy {
  readonly url: string
  readonly address: string
  #cut: 'reset' | 'silent' | undefined
  #dropNextResponse = false
  readonly #pairs = new Set<Pair>()
  #closed: Promise<void> | undefined

  constructor(
    private readonly server: net.Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    this.url = `redis://127.0.0.1:${port}`
    this.address = `127.0.0.1:${port}`
    server.on('connection', (socket) => this.accept(socket))
  }

  get isCut(): boolean {
    return this.#cut !== undefined
  }

  cut(how: 'reset' | 'silent'): void {
    this.#cut = how
    for (const pair of this.#pairs) {
      if (how === 'reset') this.drop(pair)
      else this.stall(pair)
    }
  }

  heal(): void {
    this.#cut = undefined
    for (const pair of this.#pairs) if (pair.stalled) this.drop(pair)
  }

  dropNextResponse(): void {
    this.#dropNextResponse = true
  }

  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve())
      for (const pair of this.#pairs) this.drop(pair)
    })
    return this.#closed
  }

  private accept(client: net.Socket): void {
    client.on('error', () => {}) // 'close' follows; a reset by either peer is an ordinary event here
    if (this.#closed || this.#cut === 'reset') {
      abort(client)
      return
    }
    const pair: Pair = { client, upstream: undefined, stalled: false }
    this.#pairs.add(pair)
    client.once('close', () => this.drop(pair))
    forward(pair, client, () => pair.upstream)
    if (this.#cut === 'silent') this.stall(pair)
    else this.dial(pair)
  }

  private dial(pair: Pair): void {
    const upstream = net.connect({ host: this.target.host, port: this.target.port, noDelay: true })
    pair.upstream = upstream
    upstream.on('error', () => {}) // e.g. ECONNREFUSED while the target restarts: 'close' follows
    // While stalled the client must not learn that the target went away: heal() drops the pair.
    upstream.once('close', () => {
      if (!pair.stalled) this.drop(pair)
    })
    forward(
      pair,
      upstream,
      () => pair.client,
      () => this.takeResponse(pair),
    )
  }

  /** True when this answer is the one to drop: the pair goes with it. */
  private takeResponse(pair: Pair): boolean {
    if (!this.#dropNextResponse) return false
    this.#dropNextResponse = false
    this.drop(pair)
    return true
  }

  /** Read and drop everything either way from now on (resumed, so backpressure cannot hold bytes back). */
  private stall(pair: Pair): void {
    pair.stalled = true
    pair.client.resume()
    pair.upstream?.resume()
  }

  private drop(pair: Pair): void {
    if (!this.#pairs.delete(pair)) return
    abort(pair.client)
    abort(pair.upstream)
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/** Listen on 127.0.0.1 (a free port) and forward every connection to `target` (loopback by default). */
export async function startProxy(target: { host?: string; port: number }, opts: { t?: Teardown } = {}): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1'
  if (!LOOPBACK.has(host)) throw new Error(`the proxy only forwards to loopback, not ${host}`)
  const server = net.createServer({ noDelay: true })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  if (!address || typeof address !== 'object') throw new Error(`unexpected proxy address: ${String(address)}`)
  const proxy = new LoopbackProxy(server, address.port, { host, port: target.port })
  opts.t?.teardown(() => proxy.close())
  return proxy
}
