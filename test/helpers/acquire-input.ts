import type { AcquireInput } from '../../src/locks/scripts/acquire.js'

/** acquire.lua's input for a plain write hold by `token` (no wait, no labels), with `changes` on top. */
export function writeHoldInput(token: string, changes: Partial<AcquireInput> = {}): AcquireInput {
  return {
    hold: 'write',
    token,
    ttlMs: 30_000,
    reentrant: false,
    attempt: token,
    waiterId: '',
    place: '',
    fenceHint: 0,
    keepTtl: false,
    permits: undefined,
    limit: undefined,
    proposal: '',
    owner: '',
    sessionRef: '',
    lockDelayMs: 0,
    ...changes,
  }
}
