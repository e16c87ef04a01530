import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export interface TestKey {
  name: string
  secret: string
  prefixes: string[]
  admin?: boolean
  readOnly?: boolean
  rateLimit?: { perSecond: number; burst?: number }
}

/** Writes an AUTH_FILE for these keys (hashing their secrets) and returns its path. */
export function writeAuthFile(keys: readonly TestKey[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lock-auth-'))
  const file = path.join(dir, 'auth.json')
  const body = {
    keys: keys.map((k) => ({
      name: k.name,
      secretSha256: createHash('sha256').update(k.secret).digest('hex'),
      prefixes: k.prefixes,
      admin: k.admin ?? false,
      ...(k.readOnly !== undefined ? { readOnly: k.readOnly } : {}),
      ...(k.rateLimit !== undefined ? { rateLimit: k.rateLimit } : {}),
    })),
  }
  writeFileSync(file, JSON.stringify(body, null, 2))
  return file
}
