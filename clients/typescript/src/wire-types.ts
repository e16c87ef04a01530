/** What the transport asks of a wire (node:http by default, or a fetch the caller gives). */

/** A private CA and a client certificate (PEM), for an https:// service URL. */
export interface TlsOptions {
  /** The CA(s) that signed the service's certificate, instead of the system's. */
  ca?: string | Buffer | (string | Buffer)[]
  /** A client certificate, for a service that requires one (mTLS)… */
  cert?: string | Buffer
  /** … and its private key. */
  key?: string | Buffer
}

export interface WireRequest {
  method: string
  /** The path and query, for node:http. */
  path: string
  /** The whole URL, for fetch. */
  url: string
  headers: Record<string, string>
  body: string | undefined
  timeoutMs: number
  signal: AbortSignal | undefined
  /** What the wire rejects with when the caller's signal aborted the exchange… */
  aborted: () => Error
  /** … when its timeout fired… */
  timedOut: () => Error
  /** … and when anything else broke it (refused, reset, TLS). */
  unreachable: (err: unknown) => Error
}

/** A response whose headers are in. The timeout keeps running until its body is read or the stream ends. */
export interface Answer {
  status: number
  header(name: string): string | undefined
  text(): Promise<string>
  /** The body as it arrives (an event stream). Stopping the iteration closes the connection. */
  chunks(): AsyncIterable<Uint8Array>
}

/** Sends one request. Every rejection, here or while the body is read, is one of the request's three errors. */
export type Wire = (request: WireRequest) => Promise<Answer>
