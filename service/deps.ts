import { Registry } from 'prom-client';
import type { Settings } from '../configs';
import { systemClock } from './lib/clock';
import { KvstoreConnection } from './kvstore/connection';
import { Lifecycle } from './lifecycle';
import { silentLogger } from './lib/logger';
import { registerKvstoreEvictionMetric, registerKvstoreStateMetric } from './metrics/kvstore-metrics';
import { METRICS } from '../contract';
import { RequestStats } from './metrics/request-stats';
import { ServiceMetrics } from './metrics/service-metrics';
import { createRateLimiter, type RateLimiter } from './ratelimit';
import type { CoreDeps, FeatureDeps } from './core-deps';
import { createFeatures, type Features, type FeaturesOptions } from './features';

export type { CoreDeps, FeatureDeps } from './core-deps';

/** Everything `createApp` needs. */
export interface AppDeps extends CoreDeps {
  readonly rateLimiter: RateLimiter;
  readonly features: Features;
}

/** Overrides for `createDeps`, for tests and `main`. */
export type DepsOverrides = Partial<Omit<AppDeps, 'settings'>> & {
  /** Also register Node process metrics. @default false (tests), main sets true */
  processMetrics?: boolean;
  /** Replacements inside the features (tests: a content store, a vector feed) when `features` is not given. */
  featureOptions?: FeaturesOptions;
};

/**
 * Wires the default dependencies for `settings`; anything in `overrides` wins. Does not connect
 * or load anything: call `startDeps` for that.
 */
export function createDeps(settings: Settings, overrides: DepsOverrides = {}): AppDeps {
  const logger = overrides.logger ?? silentLogger();
  const clock = overrides.clock ?? systemClock;
  const registry = overrides.registry ?? new Registry();
  const kvstore = overrides.kvstore ?? new KvstoreConnection(settings.kvstore.url, settings, logger);
  const rateLimitKvstore =
    overrides.rateLimitKvstore ??
    (settings.rateLimit.storageUrl && settings.rateLimit.storageUrl !== settings.kvstore.url
      ? new KvstoreConnection(
          settings.rateLimit.storageUrl,
          settings,
          logger.child({ store: 'ratelimit' }),
          undefined,
          {
            topology: settings.rateLimit.storageTopology,
            variablePrefix: 'RATELIMIT_STORAGE',
          },
        )
      : kvstore);
  const stats = overrides.stats ?? new RequestStats(clock);
  const lifecycle = overrides.lifecycle ?? new Lifecycle(clock.now());
  const base: FeatureDeps = { settings, logger, registry, clock, kvstore, rateLimitKvstore, stats, lifecycle };
  const features = overrides.features ?? createFeatures(base, overrides.featureOptions);
  const metrics =
    overrides.metrics ??
    new ServiceMetrics(
      registry,
      { stats, cache: features.cache, kvstoreDegraded: () => kvstore.degraded || rateLimitKvstore.degraded },
      { processMetrics: overrides.processMetrics ?? false },
    );
  // Once per registry: a test may build two sets of deps on one registry.
  if (!registry.getSingleMetric(METRICS.kvstoreState)) {
    const stores: Record<string, KvstoreConnection> =
      rateLimitKvstore === kvstore ? { kvstore } : { kvstore, ratelimit: rateLimitKvstore };
    registerKvstoreStateMetric(registry, stores);
    registerKvstoreEvictionMetric(registry, stores);
  }
  const core: CoreDeps = { ...base, metrics };
  const rateLimiter = overrides.rateLimiter ?? createRateLimiter(core);
  return { ...core, features, rateLimiter };
}

/**
 * Connects the kvstore(s) and loads content; runs `settle` (if given) once the content is loaded
 * and indexed, then marks the service ready. The service passes a full garbage collection
 * (`collectStartupGarbage`): the start-up build leaves its garbage and a heap that the first
 * collection after it must mark whole, and left to itself that collection came at the first
 * queries (at 1M documents with one core busy, 260.7 ms of the event loop's thread in one turn:
 * issue 40); run here it is the start-up's, before readiness lets traffic in.
 */
export async function startDeps(deps: AppDeps, opts: { readonly settle?: () => void } = {}): Promise<void> {
  await deps.kvstore.connect();
  if (deps.rateLimitKvstore !== deps.kvstore) await deps.rateLimitKvstore.connect();
  await deps.features.start();
  opts.settle?.();
  deps.lifecycle.markReady();
}

/** Stops everything `createDeps` and `startDeps` started. */
export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.rateLimiter.close();
  await deps.features.close();
  if (deps.rateLimitKvstore !== deps.kvstore) await deps.rateLimitKvstore.close();
  await deps.kvstore.close();
  deps.metrics.close();
}
