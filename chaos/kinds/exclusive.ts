/** Exclusive locks: /locks/:key. */
import type { HoldKind, HoldSpec } from './index.js'

const hold = (key: string): HoldSpec => ({ kind: 'exclusive', mode: 'exclusive', namespace: 'locks', key, path: `/locks/${key}` })

export const exclusive: HoldKind = {
  name: 'exclusive',
  choose: (_rng, key) => hold(key),
  probe: hold,
}
