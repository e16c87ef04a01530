import http from 'node:http'

export interface HttpResult {
  status: number
  headers: http.IncomingHttpHeaders
  body: Record<string, unknown>
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

/** Rejected with this when `timeoutMs` passes without a complete answer (the request is aborted). */
export class RequestTimeout extends Error {
  override name = 'RequestTimeout'
}

/** A small keep-alive JSON client for tests that talk to a real listening port. */
export function request(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: object; timeoutMs?: number } = {},
): Promise<HttpResult> {
  const url = new URL(path, baseUrl)
  const payload = options.body ? JSON.stringify(options.body) : undefined
  const headers: Record<string, string> = {}
  if (options.token) headers['lock-token'] = options.token
  if (payload) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(Buffer.byteLength(payload))
  }
  return new Promise((resolveOuter, rejectOuter) => {
    let timer: NodeJS.Timeout | undefined
    const resolve = (value: HttpResult) => {
      clearTimeout(timer)
      resolveOuter(value)
    }
    const reject = (err: unknown) => {
      clearTimeout(timer)
      rejectOuter(err)
    }
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        try {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} })
        } catch (err) {
          reject(new Error(`${method} ${path}: not JSON (${res.statusCode}): ${text.slice(0, 200)}`, { cause: err }))
        }
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(
        () => req.destroy(new RequestTimeout(`${method} ${path}: no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      )
    }
    req.end(payload)
  })
}
