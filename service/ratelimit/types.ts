import type { RequestHandler } from 'express';
import type { TierPlan } from './tiers';

/** Where rate-limit state lives right now. */
export type RateLimitBackend = 'kvstore' | 'memory';

/** What `/health` says about rate limiting. */
export type RateLimitStatus = 'enabled' | 'disabled' | 'unknown';

/** The multi-level rate limiter as the app sees it. */
export interface RateLimiter {
  /** Express middleware: decides, sets headers, answers 429 or calls next(). */
  readonly middleware: RequestHandler;
  /** The backend in use now (tells the truth during a kvstore outage). */
  backend(): RateLimitBackend;
  /** enabled | disabled | unknown. */
  status(): RateLimitStatus;
  /** Releases timers and connections it owns. */
  close(): Promise<void>;
}

/**
 * The outcome of checking one request against all its tiers at once. `debts[i]` is tier i's debt
 * (see gcra.ts) as of `now` after the decision: consumed when admitted, untouched when refused.
 */
export interface Decision {
  readonly allowed: boolean;
  /** The store's clock, ms since the epoch (Redis `TIME` for the kvstore). */
  readonly now: number;
  readonly debts: readonly number[];
}

/** Where tier state lives. Decides every tier of a plan atomically: all admit, or nothing is consumed. */
export interface DecisionStore {
  decide(plan: TierPlan, keys: readonly string[]): Promise<Decision>;
  /**
   * The decision at once when the store can make it without I/O (the memory store), else
   * undefined and `decide` is the way: callers then skip a promise and a microtask per request.
   * @default absent (always asynchronous)
   */
  decideAtOnce?(plan: TierPlan, keys: readonly string[]): Decision | undefined;
}

/**
 * A decision store that needs no I/O and so always decides at once (the memory store). Deciding
 * synchronously is part of what such a store is, not a shortcut: it is what the failover store
 * falls back to from inside a failed kvstore batch, where `DecisionBatch.fail` hands each waiting
 * request its fallback decision in the batch's order, in place, with no promise of its own
 * (decision-batch.ts `Recover` is synchronous); and while it is the backend the middleware
 * skips a promise and a microtask per request. The failover store depends on this interface,
 * never on the memory store's class.
 */
export interface LocalDecisionStore extends DecisionStore {
  decideAtOnce(plan: TierPlan, keys: readonly string[]): Decision;
}
