/**
 * A small seeded PRNG (mulberry32) with named sub-streams: the fault schedule and each client draw from
 * their own stream, so adding a client or a draw in one place does not shift every other choice.
 */
export class Rng {
  #state: number

  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let z = this.#state
    z = Math.imul(z ^ (z >>> 15), z | 1)
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296
  }

  /** A uniform float in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next()
  }

  /** A uniform integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number {
    return lo + Math.floor((hi - lo + 1) * this.next())
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[Math.floor(this.next() * items.length)] as T
  }

  /** Choose by weight: `[[weight, value], ...]`. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0)
    let x = this.next() * total
    for (const [w, value] of choices) {
      x -= w
      if (x < 0) return value
    }
    return choices[choices.length - 1]![1]
  }

  /** `k` distinct items in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const pool = [...items]
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      ;[pool[i], pool[j]] = [pool[j] as T, pool[i] as T]
    }
    return pool.slice(0, k)
  }
}

/** An independent stream per (seed, label): FNV-1a of the label mixed into the seed. */
export function stream(seed: number, label: string): Rng {
  let h = 0x811c9dc5 ^ (seed >>> 0)
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193)
  const rng = new Rng(h >>> 0)
  rng.next() // one draw to spread nearby hashes
  return rng
}
