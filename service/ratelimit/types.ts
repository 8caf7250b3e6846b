import type { RequestHandler } from 'express';

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
