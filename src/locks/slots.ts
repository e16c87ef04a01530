/**
 * A semaphore's slots: a slot is one token's at a time on a node, so a semaphore's hold counts only
 * where a majority holds it in the same slots (src/lua/include/holds.lua), and no two holds can both
 * be valid in one slot. Other holds name none ('').
 */

/** Anything that names the slots of a hold: a grant, a renewal, a hand-off ('' for any hold but a semaphore's). */
interface InSlots {
  readonly slots: string
}

/** The largest group of `items` naming the same slots (ties: the first to reach its size). */
export function sameSlots<T extends InSlots>(items: readonly T[]): T[] {
  const groups = new Map<string, T[]>()
  let best: T[] = []
  for (const item of items) {
    const group = groups.get(item.slots) ?? []
    group.push(item)
    groups.set(item.slots, group)
    if (group.length > best.length) best = group
  }
  return best
}

/** sameSlots, or when none names any slots (all but a semaphore's), all of them. */
export function agreeingOnSlots<T extends InSlots>(items: T[]): T[] {
  return items.some((i) => i.slots !== '') ? sameSlots(items) : items
}

/**
 * Quorum mode, a semaphore: when a majority did it (`all`) but no majority named the same slots
 * (`agreeing`, the largest group), the slots to ask every node for in a second round; else undefined.
 */
export function slotsProposal(all: readonly InSlots[], agreeing: readonly InSlots[], majority: number): string | undefined {
  if (all.length < majority || agreeing.length >= majority || agreeing[0] === undefined) return undefined
  return agreeing[0].slots
}
