/**
 * Leader elections: /elections/:name. A client campaigns (POST …/campaign with a JSON body, its
 * candidate and a value, sometimes waiting in line, sometimes bound to a session), and once leader
 * proclaims new values, renews and resigns like any holder. The term is the hold's fence; the
 * history checker sees each leadership as an exclusive hold in the 'elections' namespace.
 */
import type { HoldKind, HoldSpec } from './index.js'

/** Share of candidacies bound to a session opened for the attempt. */
const SESSION_SHARE = 0.3

const hold = (key: string, session: boolean): HoldSpec => ({
  kind: 'election',
  mode: 'exclusive',
  namespace: 'elections',
  key,
  path: `/elections/${key}`,
  election: true,
  ...(session ? { session: true } : {}),
})

export const election: HoldKind = {
  name: 'election',
  choose: (rng, key) => hold(key, rng.chance(SESSION_SHARE)),
  // Once every fault healed, a fresh candidate must be elected at once (no leader left, nobody in line).
  probe: (key) => hold(key, false),
}
