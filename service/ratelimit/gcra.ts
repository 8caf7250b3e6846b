import type { TierLimits } from '../../configs';

/**
 * GCRA (generic cell rate algorithm) in exact integer arithmetic, shared by the memory store and
 * mirrored line by line in the Lua script.
 *
 * A tier allows `limit` requests per `windowMs` sustained and `burst` at once. Instead of storing
 * the theoretical arrival time as a fraction of a millisecond (`windowMs / limit` per request is
 * rarely whole), each key stores its *debt* at a time `t`:
 *
 *   debt = limit × (TAT − t)    in units of "ms × limit"
 *
 * so one request adds exactly `windowMs` units, the bucket holds `burst × windowMs` units, and
 * the debt drains by `limit` units per millisecond. Every step is an integer addition, subtraction
 * or multiplication, exact in a double while `burst × windowMs < 2^53 ≈ 9·10^15` (a burst of
 * 10^6 with a one-day window is 8.6·10^13). Beyond that, only reachable with extreme settings,
 * values round by a few units, where one request is `windowMs` (≥ 1000) units: harmless.
 * `debt / windowMs` is how many requests are "in the bucket".
 */
export interface GcraLimits {
  /** Requests per window (the sustained rate is limit / window). */
  readonly limit: number;
  /** Window length, milliseconds. */
  readonly windowMs: number;
  /** Requests admitted at once. */
  readonly burst: number;
  /** `burst × windowMs`: the most debt a key may carry after an admitted request. */
  readonly capacity: number;
}

/** A key's stored state: its debt as of time `t` (ms since the epoch). */
export interface GcraState {
  readonly t: number;
  readonly debt: number;
}

/** The integer parameters of a tier (after the environment multiplier). */
export function gcraLimits(tier: TierLimits): GcraLimits {
  const windowMs = tier.windowSeconds * 1000;
  return { limit: tier.limit, windowMs, burst: tier.burst, capacity: tier.burst * windowMs };
}

/** The debt of `state` at `now`, after draining; a missing key has none. Time never runs backwards. */
export function debtAt(state: GcraState | undefined, now: number, g: GcraLimits): number {
  if (state === undefined) return 0;
  const elapsed = now - state.t;
  if (elapsed <= 0) return state.debt;
  const debt = state.debt - elapsed * g.limit;
  return debt > 0 ? debt : 0;
}

/** The time a state update at `now` is recorded at (a stored `t` ahead of `now` is kept). */
export function stampAt(state: GcraState | undefined, now: number): number {
  return state !== undefined && state.t > now ? state.t : now;
}

/** True when one more request fits into a bucket carrying `debt`. */
export function admits(debt: number, g: GcraLimits): boolean {
  return debt + g.windowMs <= g.capacity;
}

/** `floor(a / b)` for non-negative integers, exact even where the float quotient rounds up. */
function floorDiv(a: number, b: number): number {
  const q = Math.floor(a / b);
  return q * b > a ? q - 1 : q;
}

/** `ceil(a / b)` for non-negative integers, exact. */
function ceilDiv(a: number, b: number): number {
  const q = Math.ceil(a / b);
  return (q - 1) * b >= a ? q - 1 : q;
}

/** How many requests the bucket would admit right now, back to back. */
export function remaining(debt: number, g: GcraLimits): number {
  return debt >= g.capacity ? 0 : floorDiv(g.capacity - debt, g.windowMs);
}

/** Milliseconds until the bucket is full again (debt drained to zero). */
export function msUntilFull(debt: number, g: GcraLimits): number {
  return debt <= 0 ? 0 : ceilDiv(debt, g.limit);
}

/** Milliseconds until one request fits again (0 when one fits now). */
export function msUntilAdmitted(debt: number, g: GcraLimits): number {
  const excess = debt + g.windowMs - g.capacity;
  return excess <= 0 ? 0 : ceilDiv(excess, g.limit);
}
