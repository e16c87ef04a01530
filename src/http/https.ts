import type { TLSSocket } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import type { handshakeFailures, Metrics } from '../metrics.js'

/**
 * HTTPS (TLS_CERT_FILE, TLS_KEY_FILE) and, with TLS_CLIENT_CA_FILE, mutual TLS: a client without a
 * certificate signed by that CA (or with an expired one) is refused during the handshake, before any
 * HTTP is read, so nothing but a handshake is ever answered to it.
 */
export function httpsOptions(config: Pick<Config, 'https'>, serverOptions: object): { https?: object } {
  const files = config.https
  if (!files) return {}
  return {
    https: {
      // Fastify gives its `http` options to a plain server only: the same timeouts for HTTPS.
      ...serverOptions,
      cert: files.cert,
      key: files.key,
      minVersion: 'TLSv1.2',
      ...(files.clientCa ? { ca: files.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    },
  }
}

/**
 * A refused handshake (a plaintext client, a certificate from another CA, an expired one) never
 * reaches a route: one log line says who and why, without anything the client sent, and
 * http_tls_handshake_failures_total counts it by reason.
 */
export function logHandshakeFailures(app: FastifyInstance, config: Pick<Config, 'https'>, metrics: Metrics): void {
  if (!config.https) return
  app.server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    metrics.tlsHandshakeFailures.inc({ reason: handshakeReason(err.code) })
    app.log.warn({ remoteAddress: socket.remoteAddress, code: err.code }, `TLS handshake refused: ${err.code ?? err.message}`)
  })
}

function handshakeReason(code: string | undefined): (typeof handshakeFailures)[number] {
  if (code === undefined) return 'other'
  if (/PEER_DID_NOT_RETURN_A_CERTIFICATE|CERTIFICATE_REQUIRED/.test(code)) return 'no_certificate'
  if (/EXPIRED/.test(code)) return 'expired'
  if (/UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|CERTIFICATE_VERIFY_FAILED|UNSUPPORTED_CERTIFICATE/.test(code)) return 'untrusted'
  if (/HTTP_REQUEST|WRONG_VERSION_NUMBER|UNKNOWN_PROTOCOL|RECORD_LAYER/.test(code)) return 'not_tls'
  return 'other'
}
