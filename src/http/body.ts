import type { FastifyInstance } from 'fastify'
import { fail, ServiceError } from '../errors.js'

/** Bodies over this are refused with 413 (every body the service takes is a small JSON object). */
export const BODY_LIMIT = 16 * 1024

/** JSON bodies, where an empty body means "all defaults" and only JSON is accepted (others: 415). */
export function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    const text = body.toString()
    if (text.trim() === '') return done(null, undefined)
    parseJson(request, text, (err, value) => {
      if (err) return done(poisoned(text) ? fail.invalid(POISONED) : err)
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return done(fail.invalid('the body must be a JSON object (or empty)'))
      }
      done(null, value)
    })
  })
}

const POISONED =
  'the body has a "__proto__" key, or "constructor" with a "prototype": such keys are refused (they could change ' +
  'every object of the service); no field of the API has that name'

/** Valid JSON that the parser refused: it refuses only prototype-poisoning keys. */
function poisoned(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * Before a body is read: one that is compressed (the service decodes none: its bodies are tiny) is
 * refused with 415, and one that stops arriving gets 408 after `timeoutMs` (BODY_TIMEOUT_MS), in the
 * service's shape, with a log line, and the connection is closed. A body is at most 16 KiB, so a client
 * still sending it after seconds has stalled; Node's own request timeout (MAX_WAIT_MS + 30 s, since
 * waiting acquires hold requests open) would close the socket much later, and without an answer.
 */
export function installBodyGuards(app: FastifyInstance, timeoutMs: number): void {
  // Callback style: an async hook costs every request a promise and a microtask more.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const headers = request.headers
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return done(null, payload)
    const encoding = headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      reply.header('connection', 'close')
      return done(
        new ServiceError(
          'unsupported_media_type',
          `Content-Encoding "${encoding}" is not supported: send the JSON body uncompressed (bodies are at most 16 KiB)`,
        ),
      )
    }
    if (request.raw.complete) return done(null, payload)
    const timer = setTimeout(() => {
      if (request.raw.complete) return
      request.log.warn(
        { receivedBytes: request.raw.socket?.bytesRead },
        `the request body stalled: no complete body within ${timeoutMs} ms`,
      )
      reply.header('connection', 'close')
      // The body reader answers with this error (and stops waiting for the rest).
      payload.emit('error', new ServiceError('request_timeout', `the request body did not arrive within ${timeoutMs / 1000} s`))
    }, timeoutMs)
    timer.unref()
    const stop = () => clearTimeout(timer)
    payload.once('end', stop)
    payload.once('close', stop)
    done(null, payload)
  })
}
