import fc from 'fast-check';
import type { TierLimits } from '../../../configs';

/**
 * The simplest correct model of the limiter: for each tier and key, a token bucket of `burst`
 * tokens refilled continuously at `limit / window`, in exact rationals (BigInt, tokens scaled by
 * the window in ms). A request takes one token from every applicable bucket if each has one, and
 * nothing otherwise. No GCRA, no debts, no floats: an independent statement of the semantics.
 */
export class ReferenceModel {
  private readonly buckets = new Map<string, { tokens: bigint; at: bigint }>();

  constructor(private readonly tiers: readonly TierLimits[]) {}

  private scaled(i: number) {
    const t = this.tiers[i];
    const W = BigInt(t.windowSeconds * 1000);
    return { L: BigInt(t.limit), W, cap: BigInt(t.burst) * W };
  }

  /** Tokens (× window ms) of tier i's bucket for `key` at `now`, without changing anything. */
  tokens(i: number, key: string, now: number): bigint {
    const { L, cap } = this.scaled(i);
    const b = this.buckets.get(`${i}|${key}`);
    if (!b) return cap;
    const refilled = b.tokens + (BigInt(now) - b.at) * L;
    return refilled > cap ? cap : refilled;
  }

  /** True if a request for `keys` (one per tier) would be admitted at `now`. */
  wouldAdmit(keys: readonly string[], now: number): boolean {
    return keys.every((k, i) => this.tokens(i, k, now) >= this.scaled(i).W);
  }

  /** Applies a request; returns whether it was admitted. */
  hit(keys: readonly string[], now: number): boolean {
    const ok = this.wouldAdmit(keys, now);
    if (ok) {
      keys.forEach((k, i) => {
        this.buckets.set(`${i}|${k}`, { tokens: this.tokens(i, k, now) - this.scaled(i).W, at: BigInt(now) });
      });
    }
    return ok;
  }

  /** Whole requests tier i would admit now. */
  remaining(i: number, key: string, now: number): number {
    return Number(this.tokens(i, key, now) / this.scaled(i).W);
  }

  /** Milliseconds until tier i's bucket is full, rounded up. */
  msUntilFull(i: number, key: string, now: number): number {
    const { L, cap } = this.scaled(i);
    const missing = cap - this.tokens(i, key, now);
    return Number((missing + L - 1n) / L);
  }
}

/** One step of a scenario: time passes, or a client sends a request. */
export type Step = { readonly wait: number } | { readonly client: number };

/** Tier limits small enough that sequences hit every regime (burst, sustained, refill). */
export const tierArb: fc.Arbitrary<TierLimits> = fc.record({
  limit: fc.integer({ min: 1, max: 40 }),
  windowSeconds: fc.integer({ min: 1, max: 90 }),
  burst: fc.integer({ min: 1, max: 12 }),
});

/** Request sequences over three clients, with pauses from 0 to 20 s. */
export const stepsArb = (maxLength: number): fc.Arbitrary<Step[]> =>
  fc.array(
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 2 }).map((client) => ({ client })) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 20000 }).map((wait) => ({ wait })) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 1500 }).map((wait) => ({ wait })) },
    ),
    { minLength: 1, maxLength },
  );

/** The client addresses used by the scenarios. */
export const CLIENTS = ['198.51.100.1', '198.51.100.2', '2001:db8:7:7::1'];
