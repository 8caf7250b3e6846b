import { Cluster } from 'ioredis';
import type { RedisClient } from '../kvstore/client-factory';
import { ClusterDecisionStore } from './cluster-decision-store';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../../configs';
import type { Clock } from '../lib/clock';
import { FailoverDecisionStore, type RateLimitKvstore } from './failover-decision-store';
import { MemoryDecisionStore } from './memory-decision-store';
import { RateLimitMetrics } from './metrics';
import { rateLimitMiddleware } from './middleware';
import { RedisDecisionStore } from './redis-decision-store';
import { rateLimitWarnings } from './starvation';
import { TierResolver } from './tiers';
import type { RateLimiter } from './types';

export type { RateLimiter, RateLimitBackend, RateLimitStatus, Decision, DecisionStore } from './types';
export { clientId, requestClientId } from './client-key';
export { KEY_PREFIX, TierResolver, type TierPlan, type PlannedTier } from './tiers';
export { oneClientStarvation, rateLimitWarnings, type RateLimitWarning } from './starvation';

/**
 * What the rate limiter needs of the service's dependencies (`CoreDeps` satisfies it). Declared
 * here, not imported from deps.ts, so that deps.ts depends on the limiter and never the reverse.
 */
export interface RateLimiterDeps {
  readonly settings: Pick<Settings, 'rateLimit' | 'service'>;
  readonly logger: Logger;
  /** Where the rate-limit metrics are registered (the app's own registry). */
  readonly registry: Registry;
  readonly clock: Clock;
  /** The rate limiter's kvstore connection: its state, `up`/`down` events and client (undefined without a URL). */
  readonly rateLimitKvstore: RateLimitKvstore & {
    readonly client: RedisClient | undefined;
    /** Failed commands are reported here (health says `degraded` while they fail). */
    commandFailed?(err: unknown): void;
  };
}

/** Options beyond settings, for tests. */
export interface RateLimiterOptions {
  /** How often a failing-but-connected kvstore is probed, ms. @default 1000 */
  readonly probeIntervalMs?: number;
}

/**
 * Builds the multi-level rate limiter from `deps.settings.rateLimit`: GCRA tiers (global, ip and
 * the endpoint tier of the path) decided in one atomic step on the rate-limit kvstore connection,
 * with the in-memory decision store whenever that kvstore is not configured or not working.
 *
 * `status()` is `enabled` or `disabled` from settings: the limiter is built synchronously from
 * validated settings, so there is no state in which it cannot tell (`unknown` is never returned).
 * `backend()` is where decisions are made right now; with rate limiting disabled it still reports
 * where they would be made.
 */
export function createRateLimiter(deps: RateLimiterDeps, options: RateLimiterOptions = {}): RateLimiter {
  const rl = deps.settings.rateLimit;
  const connection = deps.rateLimitKvstore;
  const logger = deps.logger.child({ component: 'ratelimit' });
  if (rl.enabled) {
    const before = rl.effective.ipBeforeShareCap;
    if (before) {
      const ip = rl.effective.tiers.ip;
      logger.info(
        { share: rl.ipGlobalShare, configured: before, effective: ip },
        `RATE_LIMIT_IP_GLOBAL_SHARE=${rl.ipGlobalShare} lowered the ip tier from ${before.limit} per ${before.windowSeconds} s, burst ${before.burst} to ${ip.limit} per ${ip.windowSeconds} s, burst ${ip.burst}`,
      );
    }
    for (const w of rateLimitWarnings(rl.enabled, rl.effective.tiers))
      logger.warn({ code: w.code, exhausts_after_seconds: w.exhausts_after_seconds }, w.message);
  }
  const memory = new MemoryDecisionStore(deps.clock, rl.memoryMaxKeys);
  const c = connection.client;
  // On a Redis Cluster the global tier lives in its own slot: see cluster-decision-store.ts.
  const redis =
    c === undefined ? undefined : c instanceof Cluster ? new ClusterDecisionStore(c) : new RedisDecisionStore(c);
  let metrics: RateLimitMetrics | undefined;
  const store = new FailoverDecisionStore(connection, redis, memory, logger, deps.clock, {
    probeIntervalMs: options.probeIntervalMs,
    onStoreError: (err) => {
      metrics?.storeError();
      connection.commandFailed?.(err);
    },
  });
  if (rl.enableMetrics) metrics = new RateLimitMetrics(deps.registry, () => store.backend());
  const middleware = rl.enabled
    ? rateLimitMiddleware({
        settings: rl,
        resolver: new TierResolver(rl),
        store,
        logger,
        metrics,
        socketAddress: deps.settings.service.trustProxy === 0,
      })
    : (_req: unknown, _res: unknown, next: () => void) => next();
  return {
    middleware,
    backend: () => store.backend(),
    status: () => (rl.enabled ? 'enabled' : 'disabled'),
    close: async () => store.close(),
  };
}
