/** Semaphores: /semaphores/:key of limit 3, holds of 1 permit (mostly), 2 or 3. */
import type { HoldKind, HoldSpec } from './index.js'

const LIMIT = 3

const hold = (key: string, permits: number): HoldSpec => ({
  kind: 'semaphore',
  mode: 'permit',
  namespace: 'semaphores',
  key,
  path: `/semaphores/${key}`,
  acquireQuery: `limit=${LIMIT}&permits=${permits}`,
  permits,
  limit: LIMIT,
})

export const semaphore: HoldKind = {
  name: 'semaphore',
  choose: (rng, key) =>
    hold(
      key,
      rng.weighted([
        [60, 1],
        [30, 2],
        [10, 3],
      ]),
    ),
  // Every permit at once is granted only when nobody holds any: the strongest probe.
  probe: (key) => hold(key, LIMIT),
}
