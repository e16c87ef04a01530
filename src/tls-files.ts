import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'

/**
 * The PEM files of the TLS settings, read and checked at start, so that a wrong path, a key that does
 * not belong to its certificate or an expired certificate stops the service with one readable line
 * instead of failing every handshake later.
 */

/** PEM texts for one TLS link: `ca` verifies the peer, `cert` + `key` are what this end presents. */
export interface TlsFiles {
  readonly ca?: string
  readonly cert?: string
  readonly key?: string
}

export type PemKind = 'certificate' | 'CA bundle' | 'private key'

/** A file's PEM text, or the problem with it (the caller prefixes the variable's name). */
export function readPem(path: string, kind: PemKind, now = new Date()): { pem: string } | { problem: string } {
  let pem: string
  try {
    pem = readFileSync(path, 'utf8')
  } catch (err) {
    return { problem: `cannot read ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` }
  }
  if (kind === 'private key') {
    try {
      createPrivateKey(pem)
      return { pem }
    } catch {
      return { problem: `${JSON.stringify(path)} holds no PEM private key (an unencrypted "-----BEGIN … PRIVATE KEY-----" block)` }
    }
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) return { problem: `${JSON.stringify(path)} holds no PEM certificate ("-----BEGIN CERTIFICATE-----")` }
  for (const block of kind === 'certificate' ? blocks.slice(0, 1) : blocks) {
    let cert: X509Certificate
    try {
      cert = new X509Certificate(block)
    } catch {
      return { problem: `${JSON.stringify(path)} holds a certificate that does not parse` }
    }
    if (new Date(cert.validTo) < now) {
      const which = kind === 'certificate' ? 'the certificate' : 'a certificate of the CA bundle'
      return { problem: `${JSON.stringify(path)}: ${which} (${oneLine(cert.subject)}) expired on ${cert.validTo}` }
    }
  }
  return { pem }
}

/** Whether `key` is the private key of (the first certificate in) `cert`. */
export function keyMatchesCert(cert: string, key: string): boolean {
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))
  } catch {
    return false
  }
}

/**
 * A certificate subject as written in AUTH_FILE's `certSubject` ("CN=billing, O=Acme"): attribute →
 * value. Every attribute given must be in the presented certificate's subject with that value.
 */
export function parseSubject(text: string): Map<string, string> | undefined {
  const pairs = text.split(',').map((part) => /^\s*([A-Za-z][A-Za-z0-9.]*)\s*=\s*(\S(?:.*\S)?)\s*$/.exec(part))
  if (pairs.length === 0 || pairs.some((m) => m === null)) return undefined
  return new Map(pairs.map((m) => [(m as RegExpExecArray)[1] as string, (m as RegExpExecArray)[2] as string]))
}

/** Node's `getPeerCertificate().subject` (a value per attribute, or several) as text for messages. */
export function subjectText(subject: Record<string, string | string[] | undefined> | undefined): string {
  if (!subject) return 'none'
  const parts = Object.entries(subject).flatMap(([k, v]) => [v ?? []].flat().map((one) => `${k}=${one}`))
  return parts.length > 0 ? parts.join(', ') : 'an empty subject'
}

/** Whether the presented subject has every attribute `wanted` names, with the same value. */
export function subjectMatches(wanted: ReadonlyMap<string, string>, subject: Record<string, string | string[] | undefined>): boolean {
  for (const [name, value] of wanted) {
    const have = [subject[name] ?? []].flat()
    if (!have.includes(value)) return false
  }
  return true
}

function oneLine(subject: string): string {
  return subject.split('\n').join(', ')
}
