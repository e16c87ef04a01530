import type { FastifyInstance } from 'fastify'
import { fail, ServiceError } from '../errors.js'

/** Bodies over this are refused with 413 (every body the service takes is a small JSON object). */
export const BODY_LIMIT = 16 * 1024

/** JSON bodies, where an empty body means "all defaults" and only JSON is accepted (others: 415). */
export function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    // A compressed body is refused, whatever its bytes: the service decodes none (its bodies are tiny).
    const encoding = request.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(
        new ServiceError(
          'unsupported_media_type',
          `Content-Encoding "${encoding}" is not supported: send the JSON body uncompressed (bodies are at most 16 KiB)`,
        ),
      )
    }
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
