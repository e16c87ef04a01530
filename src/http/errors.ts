import http, { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { ServiceError, retryAfterSeconds } from '../errors.js'

/** Maps every error — ours, fastify's, validation — onto the one JSON error shape. Never a 500 for client input. */
export function installErrorHandling(app: FastifyInstance): void {
  const routes = new RouteTable()
  app.addHook('onRoute', (route) => routes.add(route.method, route.url))

  app.setErrorHandler((err: FastifyError | ServiceError, request, reply) => {
    const error = toServiceError(err)
    if (error.status >= 500 && error.code === 'internal_error') request.log.error({ err }, 'unexpected error')
    // An error thrown by an onRequest hook that runs before the one setting it (auth's 401) has none yet.
    reply.header('x-request-id', request.id)
    return sendError(reply, error)
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/'
    const allowed = routes.methodsOf(path)
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      return sendError(
        reply,
        new ServiceError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`, {
          allow: allowed,
        }),
      )
    }
    return sendError(reply, new ServiceError('route_not_found', `no route ${request.method} ${path}`))
  })
}

/** Answers with one of our errors: its status, Retry-After when it has one, and the JSON error shape. */
export function sendError(reply: FastifyReply, error: ServiceError): FastifyReply {
  // Also for errors thrown by hooks that run before the request-id hook (API keys: 401).
  reply.header('x-request-id', reply.request.id)
  if (error.retryAfterMs !== undefined) reply.header('retry-after', String(retryAfterSeconds(error.retryAfterMs)))
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer')
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.body())
}

/** The methods each route pattern answers, to tell 405 (known path, other method) from 404. */
class RouteTable {
  private readonly patterns = new Map<string, { re: RegExp; methods: Set<string> }>()

  add(method: string | string[], url: string): void {
    let entry = this.patterns.get(url)
    if (!entry) {
      // find-my-way's parameters: `:name` takes one path segment (possibly empty).
      const source = url
        .split(/(:\w+)/)
        .map((part) => (part.startsWith(':') ? '[^/]*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('')
      entry = { re: new RegExp(`^${source}$`), methods: new Set() }
      this.patterns.set(url, entry)
    }
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m.toUpperCase())
  }

  methodsOf(path: string): string[] {
    const methods = new Set<string>()
    for (const { re, methods: m } of this.patterns.values()) if (re.test(path)) for (const x of m) methods.add(x)
    const order = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']
    return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b))
  }
}

/**
 * Fastify's errors from before routing (a URL it cannot decode, a path parameter over
 * maxParamLength), in the service's shape instead of fastify's.
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
  const mapped = toServiceError(error as FastifyError)
  request.log.info({ req: request, res: { statusCode: mapped.status }, error: mapped.code }, 'request completed')
  reply.header('x-request-id', request.id)
  void sendError(reply, mapped)
}

/**
 * Requests Node's HTTP parser refused before fastify saw them (request line or headers over
 * Node's limit, malformed HTTP, a request that took too long), answered in the service's shape
 * on the raw socket, then closed.
 */
export function clientErrorHandler(this: { log: FastifyBaseLogger }, err: ParserError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const error = clientError(err)
  if (error.code === 'request_timeout') this.log.warn({ code: err.code, status: error.status }, `refused: ${error.message}`)
  else this.log.debug({ code: err.code, status: error.status }, 'refused by the HTTP parser')
  if (socket.writable) {
    const body = JSON.stringify(error.body())
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/** Node's limit on the request line and headers together (--max-http-header-size, 16 KiB by default). */
const HEADER_LIMIT = http.maxHeaderSize

/** What Node's 'clientError' gives: `rawPacket` is what was received of the request. */
type ParserError = Error & { code?: string; rawPacket?: unknown }

function clientError(err: ParserError): ServiceError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ServiceError('request_timeout', 'the request (its headers or its body) did not arrive in time (BODY_TIMEOUT_MS)')
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // Node limits the request line and the headers together; when the request line is most of it,
    // the URL is what is too long.
    const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined
    const lineEnd = raw?.indexOf('\r\n') ?? -1
    const requestLine = raw === undefined ? 0 : lineEnd === -1 ? raw.length : lineEnd
    if (requestLine >= HEADER_LIMIT / 2)
      return new ServiceError(
        'uri_too_long',
        `the URL is too long (${requestLine}+ bytes; the request line and headers may take ${HEADER_LIMIT} bytes together)`,
      )
    return new ServiceError(
      'headers_too_large',
      `the request headers are too large (the request line and headers may take ${HEADER_LIMIT} bytes together)`,
    )
  }
  return new ServiceError('invalid_request', `the request is not valid HTTP (${err.code ?? 'parse error'})`)
}

function toServiceError(err: FastifyError | ServiceError): ServiceError {
  if (err instanceof ServiceError) return err
  if (hasZodFastifySchemaValidationErrors(err)) {
    const issues = err.validation.map((v) => {
      const path = [err.validationContext, ...v.instancePath.split('/').filter(Boolean)]
      // A query parameter given twice (?ttl=1s&ttl=2s) reaches the schema as an array.
      const repeated = err.validationContext === 'querystring' && path.length === 2 && /received array/.test(v.message ?? '')
      return {
        path: path.join('.'),
        message: repeated ? `the query parameter "${path[1]}" is given more than once; give it once` : (v.message ?? 'invalid'),
      }
    })
    const first = issues[0]
    const message = first ? `${first.path}: ${first.message}` : 'the request does not match the schema'
    return new ServiceError('invalid_request', message, { issues })
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError('payload_too_large', 'the request body is over the 16 KiB limit')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ServiceError('unsupported_media_type', 'send JSON (Content-Type: application/json), or use query parameters')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ServiceError('invalid_request', 'the body is not valid JSON')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ServiceError('uri_too_long', 'a path segment of the URL is too long (lock keys are at most 200 characters)')
    case 'FST_ERR_BAD_URL':
      return new ServiceError('invalid_request', 'the URL is not valid (a bad %-escape?)')
  }
  if (err instanceof SyntaxError) return new ServiceError('invalid_request', 'the body is not valid JSON')
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) {
    return new ServiceError('invalid_request', sentence(err.message) ?? 'the request is not valid')
  }
  return new ServiceError('internal_error', 'an unexpected error occurred; it has been logged')
}

/** Fastify's own messages, as one sentence of ours (without its FST_ code). */
function sentence(message: string | undefined): string | undefined {
  if (!message) return undefined
  return message.replace(/^FST_\w+:\s*/, '')
}
