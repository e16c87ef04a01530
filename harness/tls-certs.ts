/**
 * Certificates for TLS tests, made with Debian's `openssl` in a temp dir (EC P-256 keys: cheap to make).
 *
 * - `ca`: the CA every good certificate is signed by; `otherCa`: a CA nobody trusts.
 * - `server`: for 127.0.0.1 and localhost (redis-server and the service both use it).
 * - `client` (CN=billing) and `otherClient` (CN=other): client certificates from `ca`.
 * - `expiredServer`, `expiredClient`: from `ca`, their validity ended yesterday.
 * - `strangerClient`: CN=billing, but from `otherCa`.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { RedisTls, Teardown } from './redis-server.js'

const run = promisify(execFile)
const OPENSSL = process.env.OPENSSL_BIN ?? 'openssl'

/** A certificate and its key, as files and as PEM text. */
export interface CertPair {
  certFile: string
  keyFile: string
  cert: string
  key: string
}

export interface TlsCerts {
  dir: string
  /** The trusted CA's certificate file and PEM. */
  caFile: string
  ca: string
  /** A second CA, trusted by nobody. */
  otherCaFile: string
  otherCa: string
  server: CertPair
  client: CertPair
  otherClient: CertPair
  expiredServer: CertPair
  expiredClient: CertPair
  strangerClient: CertPair
}

const KEY_ARGS = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']

async function makeCa(dir: string, name: string): Promise<{ certFile: string; keyFile: string }> {
  const certFile = path.join(dir, `${name}.crt`)
  const keyFile = path.join(dir, `${name}.key`)
  await run(OPENSSL, ['req', '-x509', ...KEY_ARGS, '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${name}`])
  return { certFile, keyFile }
}

/** A leaf certificate signed by `ca`; `days` -1: its validity ended before it began (expired). */
async function makeLeaf(
  dir: string,
  name: string,
  ca: { certFile: string; keyFile: string },
  opts: { subject: string; server: boolean; days: number },
): Promise<CertPair> {
  const certFile = path.join(dir, `${name}.crt`)
  const keyFile = path.join(dir, `${name}.key`)
  const csr = path.join(dir, `${name}.csr`)
  const ext = path.join(dir, `${name}.ext`)
  await writeFile(
    ext,
    opts.server ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' : 'extendedKeyUsage=clientAuth\n',
  )
  await run(OPENSSL, ['req', ...KEY_ARGS, '-keyout', keyFile, '-out', csr, '-subj', opts.subject])
  await run(OPENSSL, [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-days',
    String(opts.days),
    '-extfile',
    ext,
    '-out',
    certFile,
  ])
  return { certFile, keyFile, cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') }
}

/** Makes every certificate (about a second of openssl work); the dir is removed at teardown. */
export async function makeTlsCerts(opts: { t?: Teardown } = {}): Promise<TlsCerts> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-tls-'))
  opts.t?.teardown(() => rm(dir, { recursive: true, force: true }))
  const [ca, otherCa] = await Promise.all([makeCa(dir, 'ca'), makeCa(dir, 'other-ca')])
  // The server cert also says clientAuth: redis-server presents it to its replicas and cluster peers.
  const server = await makeLeaf(dir, 'server', ca, { subject: '/CN=localhost', server: true, days: 2 })
  const client = await makeLeaf(dir, 'client', ca, { subject: '/CN=billing', server: false, days: 2 })
  const otherClient = await makeLeaf(dir, 'other-client', ca, { subject: '/CN=other', server: false, days: 2 })
  const expiredServer = await makeLeaf(dir, 'expired-server', ca, { subject: '/CN=localhost', server: true, days: -1 })
  const expiredClient = await makeLeaf(dir, 'expired-client', ca, { subject: '/CN=billing', server: false, days: -1 })
  const strangerClient = await makeLeaf(dir, 'stranger-client', otherCa, { subject: '/CN=billing', server: false, days: 2 })
  return {
    dir,
    caFile: ca.certFile,
    ca: await readFile(ca.certFile, 'utf8'),
    otherCaFile: otherCa.certFile,
    otherCa: await readFile(otherCa.certFile, 'utf8'),
    server,
    client,
    otherClient,
    expiredServer,
    expiredClient,
    strangerClient,
  }
}

/**
 * A TLS-only redis-server's settings: `server`'s certificate (the good one by default), clients must
 * show one from `ca`, and the harness's own connections show `client`'s.
 */
export function redisTlsOf(certs: TlsCerts, server: CertPair = certs.server): RedisTls {
  return {
    certFile: server.certFile,
    keyFile: server.keyFile,
    caFile: certs.caFile,
    authClients: 'yes',
    clientCert: { certFile: certs.client.certFile, keyFile: certs.client.keyFile },
  }
}
