import type { CoreDeps } from '../deps';
import type { RateLimiter } from './types';

export type { RateLimiter, RateLimitBackend, RateLimitStatus } from './types';

/** Builds the rate limiter from settings. (Placeholder until the limiter lands: lets all through.) */
export function createRateLimiter(deps: CoreDeps): RateLimiter {
  return {
    middleware: (_req, _res, next) => next(),
    backend: () => (deps.kvstore.available ? 'kvstore' : 'memory'),
    status: () => (deps.settings.rateLimit.enabled ? 'enabled' : 'disabled'),
    close: async () => undefined,
  };
}
