/**
 * A loopback TCP proxy in front of one target (usually a redis-server), for network faults:
 * put one between a service and a Redis node, then cut it ('reset' or 'silent') and heal it.
 *
 * Each accepted connection dials the target anew, so the target may be restarted on the same port
 * behind a live proxy. Bytes are forwarded as they come (with backpressure), never inspected — or, with
 * setLatency(), each chunk after an added delay, per direction, in order (a delay line, never a reordering).
 */
import net from 'node:net'
import { performance } from 'node:perf_hooks'
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
  /** Delay every chunk from now on: `up` client → target, `down` target → client (either may be left out: no delay).
   *  Bytes keep their order within a connection; `undefined` lifts it (chunks already queued still wait their turn). */
  setLatency(latency: Latency | undefined): void
  readonly latency: Latency | undefined
  close(): Promise<void>
}

/** A delay of `ms` plus a uniform 0–`jitterMs` more, drawn per chunk. */
export interface LinkDelay {
  ms: number
  jitterMs?: number
}

export interface Latency {
  up?: LinkDelay
  down?: LinkDelay
}

/** One proxied connection: the accepted socket and the one dialled to the target (none while stalled). */
interface Pair {
  readonly client: net.Socket
  upstream: net.Socket | undefined
  /** Set by a 'silent' cut: bytes either way are read and dropped; the pair dies on heal(). */
  stalled: boolean
  /** Each direction's delay line (cleared when the pair is dropped). */
  readonly lines: DelayLine[]
}

/** Close at once. (Not resetAndDestroy: on Node 20 it leaves a handle that keeps the test process alive.) */
function abort(socket: net.Socket | undefined): void {
  if (!socket || socket.destroyed) return
  socket.destroy()
}

/**
 * Runs each pushed action once its delay is over, in push order: a chunk never overtakes an earlier one,
 * so a shorter jitter draw waits behind a longer one.
 */
class DelayLine {
  readonly #queue: { dueAt: number; run: () => void }[] = []
  #lastDueAt = 0
  #timer: NodeJS.Timeout | undefined

  push(delayMs: number, run: () => void): void {
    if (delayMs <= 0 && this.#queue.length === 0) return run()
    this.#lastDueAt = Math.max(performance.now() + delayMs, this.#lastDueAt)
    this.#queue.push({ dueAt: this.#lastDueAt, run })
    this.#schedule()
  }

  #schedule(): void {
    if (this.#timer || this.#queue.length === 0) return
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined
        while (this.#queue.length > 0 && this.#queue[0]!.dueAt <= performance.now() + 1) this.#queue.shift()!.run()
        this.#schedule()
      },
      Math.max(0, this.#queue[0]!.dueAt - performance.now()),
    )
  }

  clear(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#queue.length = 0
  }
}

const drawDelay = (d: LinkDelay | undefined, random: () => number) => (d ? d.ms + (d.jitterMs ?? 0) * random() : 0)

/**
 * Forward `from` → `to` unless the pair is stalled or `intercept` takes the chunk; pause `from` while `to` is backed up.
 * Each chunk first waits `delay()` ms in the direction's delay line (0: none).
 */
function forward(pair: Pair, from: net.Socket, to: () => net.Socket | undefined, delay: () => number, intercept?: () => boolean): void {
  const line = new DelayLine()
  pair.lines.push(line)
  from.on('data', (chunk: Buffer) => {
    line.push(delay(), () => {
      const target = to()
      if (pair.stalled || !target || target.destroyed || intercept?.()) return // dropped
      if (!target.write(chunk)) {
        from.pause()
        target.once('drain', () => from.resume())
      }
    })
  })
  from.on('end', () => {
    line.push(delay(), () => {
      if (!pair.stalled) to()?.end()
    })
  })
}

class LoopbackProxy implements TcpProxy {
  readonly url: string
  readonly address: string
  #cut: 'reset' | 'silent' | undefined
  #dropNextResponse = false
  #latency: Latency | undefined
  readonly #pairs = new Set<Pair>()
  #closed: Promise<void> | undefined

  constructor(
    private readonly server: net.Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
    private readonly random: () => number,
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

  get latency(): Latency | undefined {
    return this.#latency
  }

  setLatency(latency: Latency | undefined): void {
    this.#latency = latency
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
    const pair: Pair = { client, upstream: undefined, stalled: false, lines: [] }
    this.#pairs.add(pair)
    client.once('close', () => this.drop(pair))
    forward(
      pair,
      client,
      () => pair.upstream,
      () => drawDelay(this.#latency?.up, this.random),
    )
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
      () => drawDelay(this.#latency?.down, this.random),
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
    for (const line of pair.lines) line.clear()
    abort(pair.client)
    abort(pair.upstream)
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/**
 * Listen on 127.0.0.1 (a free port) and forward every connection to `target` (loopback by default);
 * `random` draws the jitter of setLatency() (default Math.random).
 */
export async function startProxy(
  target: { host?: string; port: number },
  opts: { t?: Teardown; random?: () => number } = {},
): Promise<TcpProxy> {
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
  const proxy = new LoopbackProxy(server, address.port, { host, port: target.port }, opts.random ?? Math.random)
  opts.t?.teardown(() => proxy.close())
  return proxy
}
