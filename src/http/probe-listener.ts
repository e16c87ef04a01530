import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** What the probe port serves: the kubelet's probes and Prometheus' scrape. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics'])
/** Request headers passed on: a scrape's API key (PROTECT_METRICS) and what it accepts. */
const PASSED_HEADERS = ['authorization', 'accept'] as const
/** Answer headers that belong to the connection the app did not answer on. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding'])

export interface ProbeListener {
  /** http://host:port */
  address: string
  close(): Promise<void>
}

/**
 * PROBE_PORT: plain HTTP beside the main port, for clients that cannot present a client certificate
 * when the main port requires one (TLS_CLIENT_CA_FILE) — the kubelet's HTTP probes above all. It
 * serves GET and HEAD of the probe paths only, each answered by the app itself (`inject`: the same
 * routes, access rules, logs and metrics as on the main port); anything else is 404 and reaches no
 * lock. Bind it where only the node and the scraper can reach it (HOST applies to both ports).
 */
export async function listenForProbes(
  app: FastifyInstance,
  options: { port: number; host: string; requestTimeoutMs: number },
): Promise<ProbeListener> {
  const server = http.createServer((req, res) => {
    const method = req.method === 'HEAD' ? 'HEAD' : 'GET'
    const url = req.url ?? '/'
    const path = url.split('?')[0] ?? '/'
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !PROBE_PATHS.has(path)) {
      const body = { error: 'route_not_found', message: `the probe port serves GET ${[...PROBE_PATHS].join(', ')} only` }
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
      return
    }
    const headers: Record<string, string> = {}
    for (const name of PASSED_HEADERS) {
      const value = req.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    app.inject({ method, url, headers }).then(
      (answer) => {
        const out: http.OutgoingHttpHeaders = {}
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) out[name] = value
        res.writeHead(answer.statusCode, out).end(method === 'HEAD' ? undefined : answer.rawPayload)
      },
      (err: unknown) => {
        // The app is closing (or gone): not ready, and say so as the main port would.
        const message = err instanceof Error ? err.message : String(err)
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' })
        res.end(JSON.stringify({ error: 'shutting_down', message: `the service is not answering: ${message}` }))
      },
    )
  })
  server.requestTimeout = options.requestTimeoutMs
  server.headersTimeout = Math.min(options.requestTimeoutMs, 60_000)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { address, port } = server.address() as AddressInfo
  return {
    address: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
