/**
 * Keep-alive HTTP/1.1 clients for the load generator: one connection each, one request at a time
 * (closed loop, no pipelining).
 *
 * - `raw`: a net.Socket writing requests as one string and reading responses with a minimal parser
 *   (status line, Content-Length, body). The cheapest in client CPU, which matters on a 2-core machine
 *   where every cycle the load generator burns is taken from the server under test; it is the default
 *   (`bench/loadgen-compare.ts` measures it against node:http and autocannon).
 * - `node-http`: node:http with a keep-alive Agent limited to one socket, for comparison.
 *
 * Both answer every request with its status and body; neither follows redirects nor retries.
 */
import http from 'node:http'
import net from 'node:net'
import tls from 'node:tls'

export interface HttpResponse {
  status: number
  body: Buffer
}

export interface RequestOptions {
  headers?: Readonly<Record<string, string>>
  /** A JSON body (sent with Content-Type: application/json). */
  json?: unknown
}

export interface HttpConnection {
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>
  close(): void
}

export type ClientKind = 'raw' | 'node-http'
export const clientKinds: readonly ClientKind[] = ['raw', 'node-http']

/** `tlsCa`: the server speaks HTTPS with a certificate from this CA (the raw client only). */
export function connect(kind: ClientKind, host: string, port: number, tlsCa?: string): HttpConnection {
  if (tlsCa !== undefined && kind !== 'raw') throw new Error('HTTPS servers are measured with the raw client only')
  return kind === 'raw' ? new RawConnection(host, port, tlsCa) : new NodeHttpConnection(host, port)
}

const CRLF2 = Buffer.from('\r\n\r\n')

class RawConnection implements HttpConnection {
  private socket: net.Socket | undefined
  private buffer: Buffer | undefined
  private pending: { resolve: (r: HttpResponse) => void; reject: (e: Error) => void } | undefined
  private closeAfter = false
  private readonly hostHeader: string
  private closed = false

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly tlsCa?: string,
  ) {
    this.hostHeader = `Host: ${host}:${port}\r\n`
  }

  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse> {
    if (this.pending) return Promise.reject(new Error('one request at a time per connection'))
    if (this.closed) return Promise.reject(new Error('connection closed'))
    let head = `${method} ${path} HTTP/1.1\r\n${this.hostHeader}`
    if (options?.headers) for (const name in options.headers) head += `${name}: ${options.headers[name]}\r\n`
    let body = ''
    if (options?.json !== undefined) {
      body = JSON.stringify(options.json)
      head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    } else if (method === 'POST' || method === 'PUT') {
      head += 'Content-Length: 0\r\n\r\n'
    } else {
      head += '\r\n'
    }
    const socket = this.ensureSocket()
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      socket.write(body === '' ? head : head + body)
    })
  }

  close(): void {
    this.closed = true
    this.socket?.destroy()
  }

  private ensureSocket(): net.Socket {
    if (this.socket && !this.socket.destroyed && !this.closeAfter) return this.socket
    this.socket?.destroy()
    this.closeAfter = false
    this.buffer = undefined
    const socket =
      this.tlsCa === undefined
        ? net.connect({ host: this.host, port: this.port, noDelay: true })
        : tls.connect({ host: this.host, port: this.port, ca: this.tlsCa }).setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined
      this.fail(new Error('connection closed by the server'))
    })
    this.socket = socket
    return socket
  }

  private fail(err: Error): void {
    const pending = this.pending
    this.pending = undefined
    this.buffer = undefined
    pending?.reject(err)
  }

  private onData(chunk: Buffer): void {
    const buf = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk
    const headerEnd = buf.indexOf(CRLF2)
    if (headerEnd < 0) {
      this.buffer = buf
      return
    }
    const head = buf.toString('latin1', 0, headerEnd)
    const status = Number(head.slice(9, 12))
    const lower = head.toLowerCase()
    const lengthAt = lower.indexOf('\r\ncontent-length:')
    if (lengthAt < 0 && status !== 204 && status !== 304) {
      this.socket?.destroy()
      this.fail(new Error(`response without Content-Length (status ${status}); chunked bodies are not supported`))
      return
    }
    const length = lengthAt < 0 ? 0 : parseInt(lower.slice(lengthAt + 17, lower.indexOf('\r\n', lengthAt + 2) >>> 0), 10)
    const end = headerEnd + 4 + length
    if (buf.length < end) {
      this.buffer = buf
      return
    }
    this.buffer = undefined
    if (lower.includes('\r\nconnection: close')) this.closeAfter = true
    const pending = this.pending
    this.pending = undefined
    pending?.resolve({ status, body: buf.subarray(headerEnd + 4, end) })
  }
}

class NodeHttpConnection implements HttpConnection {
  private readonly agent: http.Agent

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  }

  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...options?.headers }
      let body: string | undefined
      if (options?.json !== undefined) {
        body = JSON.stringify(options.json)
        headers['content-type'] = 'application/json'
        headers['content-length'] = String(Buffer.byteLength(body))
      } else if (method === 'POST' || method === 'PUT') {
        headers['content-length'] = '0'
      }
      const req = http.request({ host: this.host, port: this.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }),
        )
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  close(): void {
    this.agent.destroy()
  }
}
