/**
 * Hold kinds the chaos clients use, one module each. A kind says which hold a client asks for on a key
 * (its HTTP path, and its mode and namespace for the history checker) and which hold proves at the end
 * that the key is grantable again. To add one (a semaphore, a session-bound hold, an election), write a module
 * exporting a HoldKind and list it here.
 */
import type { HoldMode } from '../../harness/history.js'
import type { Rng } from '../prng.js'
import { election } from './election.js'
import { exclusive } from './exclusive.js'
import { rw } from './rw.js'
import { semaphore } from './semaphore.js'
import { session } from './session.js'

export interface HoldSpec {
  /** the kind's name (report grouping) */
  kind: string
  /** for the history checker: holds conflict unless both are 'read'; 'permit' holds are counted against their limit */
  mode: HoldMode
  /** for the history checker: holds in different namespaces never conflict */
  namespace: string
  key: string
  /** POST `path` acquires, PUT `${path}/renew` renews, DELETE `path` releases */
  path: string
  /** More query parameters of the acquire (a semaphore's `limit=…&permits=…`) */
  acquireQuery?: string
  /** mode 'permit': the permits asked for and the semaphore's limit, for the history checker */
  permits?: number
  limit?: number
  /** Bound to a session opened for the attempt (POST /sessions): kept alive and released through it */
  session?: boolean
  /**
   * An election's candidacy: POST `${path}/campaign` with a JSON body (candidate, value, ttlMs, waitMs,
   * session, token), the grant's term as its fence, new values proclaimed (PUT `${path}/proclaim`) while leader
   */
  election?: boolean
  /** The hold's lock-delay (?lockDelay=), for the share of acquires that set one (withLockDelay) */
  lockDelayMs?: number
}

/** The share of every kind's acquires that set a lock-delay, and the longest they set. */
const LOCK_DELAY_SHARE = 0.25
export const MAX_CHAOS_LOCK_DELAY_MS = 1_000

/**
 * Lock-delay is a property of any hold: a share of every kind's acquires (a kind added later too) set
 * one, so the history checker covers holds with a delay and their refusals (409 lock_delayed).
 */
export function withLockDelay(rng: Rng, spec: HoldSpec): HoldSpec {
  if (spec.election) return spec // a campaign takes no lock-delay
  return rng.chance(LOCK_DELAY_SHARE) ? { ...spec, lockDelayMs: rng.int(50, MAX_CHAOS_LOCK_DELAY_MS) } : spec
}

export interface HoldKind {
  readonly name: string
  /** The hold a client asks for this time on `key`. */
  choose(rng: Rng, key: string): HoldSpec
  /** A hold on `key` that a fresh client must be granted once every fault healed. */
  probe(key: string): HoldSpec
}

const registry: Readonly<Record<string, HoldKind>> = { exclusive, rw, semaphore, session, election }

export function kindNames(): string[] {
  return Object.keys(registry)
}

export function kindsNamed(names: readonly string[]): HoldKind[] {
  return names.map((name) => {
    const kind = registry[name]
    if (!kind) throw new Error(`unknown hold kind ${name}`)
    return kind
  })
}
