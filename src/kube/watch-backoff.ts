// Reconnect delays of a dropped watch (spec: exponential, base 5 s, maximum 60 s). Jittered so that the
// watches an API server restart drops together do not all come back in the same instant, and never outside
// [base, max]: the first retry waits at least the base, a long outage never more than the cap.
export interface BackoffOptions { baseMs: number; maxMs: number }

/** Delay before reconnect attempt `attempt` (0 = the first after a drop). */
export function backoffDelay(attempt: number, o: BackoffOptions, random: () => number = Math.random): number {
  const base = Math.max(1, o.baseMs)
  const cap = Math.max(base, o.maxMs)
  const exp = Math.min(cap, base * 2 ** Math.min(Math.max(0, attempt), 40))
  // ±25 % around the exponential step, clipped to the bounds.
  const lo = Math.max(base, exp * 0.75)
  const hi = Math.min(cap, exp * 1.25)
  return Math.round(lo + Math.min(1, Math.max(0, random())) * (hi - lo))
}
