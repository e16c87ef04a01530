/**
 * How long a holder may safely act on a grant: the TTL, less the time the grant took (measured with a
 * monotonic clock from the start of the attempt), less the clock drift allowed between the service and
 * the Redis nodes (ttl × driftFactor + 2 ms). A grant whose validity is ≤ 0 is not a grant.
 */
export function validityMs(ttlMs: number, elapsedMs: number, driftFactor: number): number {
  const drift = ttlMs * driftFactor + 2
  return Math.floor(ttlMs - elapsedMs - drift)
}
