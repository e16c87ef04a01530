/** How far ahead of the service clock fences are proposed, so that the nodes' clocks stay below it. */
const FENCE_HINT_LEAD_MS = 1000

/** The fence nodes should propose (µs; include/fence.lua), so that a quorum's proposals agree. */
export function fenceHint(): number {
  return (Date.now() + FENCE_HINT_LEAD_MS) * 1000
}
