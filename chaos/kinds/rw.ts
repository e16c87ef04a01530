/** Read-write locks: /rwlocks/:key/read (shared) and /rwlocks/:key/write (exclusive), mostly reads. */
import type { HoldKind, HoldSpec } from './index.js'

const READ_SHARE = 0.7

const hold = (key: string, mode: 'read' | 'write'): HoldSpec => ({
  kind: 'rw',
  mode,
  namespace: 'rwlocks',
  key,
  path: `/rwlocks/${key}/${mode}`,
})

export const rw: HoldKind = {
  name: 'rw',
  choose: (rng, key) => hold(key, rng.chance(READ_SHARE) ? 'read' : 'write'),
  // A write hold is granted only when no reader or writer holds the key: the strongest probe.
  probe: (key) => hold(key, 'write'),
}
