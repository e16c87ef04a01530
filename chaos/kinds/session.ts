/**
 * Session-bound exclusive locks: /locks/:key acquired with `session` (a session opened for the
 * attempt, its TTL the attempt's), kept alive by the session's keepalive instead of a renew, released
 * by its token or by closing the session; an abandoned one lapses with its session.
 */
import type { HoldKind, HoldSpec } from './index.js'

const hold = (key: string, session: boolean): HoldSpec => ({
  kind: 'session',
  mode: 'exclusive',
  namespace: 'locks',
  key,
  path: `/locks/${key}`,
  ...(session ? { session: true } : {}),
})

export const session: HoldKind = {
  name: 'session',
  choose: (_rng, key) => hold(key, true),
  // Once every fault healed, a plain hold of the key must be grantable (no session left holds it).
  probe: (key) => hold(key, false),
}
