import type { FastifyError, FastifyInstance } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { ServiceError, retryAfterSeconds } from '../errors.js'

/** Maps every error — ours, fastify's, validation — onto the one JSON error shape. Never a 500 for client input. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ServiceError, request, reply) => {
    const error = toServiceError(err)
    if (error.status >= 500 && error.code === 'internal_error') request.log.error({ err }, 'unexpected error')
    if (error.retryAfterMs !== undefined) reply.header('retry-after', String(retryAfterSeconds(error.retryAfterMs)))
    if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer')
    return reply.code(error.status).send(error.body())
  })

  app.setNotFoundHandler((request, reply) => {
    const error = new ServiceError('route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`)
    return reply.code(error.status).send(error.body())
  })
}

function toServiceError(err: FastifyError | ServiceError): ServiceError {
  if (err instanceof ServiceError) return err
  if (hasZodFastifySchemaValidationErrors(err)) {
    const issues = err.validation.map((v) => ({
      path: [err.validationContext, ...v.instancePath.split('/').filter(Boolean)].join('.'),
      message: v.message ?? 'invalid',
    }))
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
  }
  if (err instanceof SyntaxError) return new ServiceError('invalid_request', 'the body is not valid JSON')
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) {
    return new ServiceError('invalid_request', err.message || 'the request is not valid')
  }
  return new ServiceError('internal_error', 'an unexpected error occurred; it has been logged')
}
