import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../configs';
import type { Clock } from './lib/clock';
import type { KvstoreConnection } from './kvstore/connection';
import type { Lifecycle } from './lifecycle';
import type { RequestStats } from './metrics/request-stats';
import type { ServiceMetrics } from './metrics/service-metrics';

/**
 * Dependencies every part of the service may use. Injected, never module-level singletons.
 * Its own module (not deps.ts, which wires them) so the features and routes that take them do
 * not import the wiring that imports them.
 */
export interface CoreDeps {
  readonly settings: Settings;
  readonly logger: Logger;
  /** prom-client registry of this app instance (never the global one). */
  readonly registry: Registry;
  readonly clock: Clock;
  /** The shared kvstore connection (state `not_configured` without KVSTORE_URL). */
  readonly kvstore: KvstoreConnection;
  /** The rate limiter's kvstore connection (not a decision store): RATELIMIT_STORAGE_URL, else the shared kvstore. */
  readonly rateLimitKvstore: KvstoreConnection;
  readonly stats: RequestStats;
  readonly metrics: ServiceMetrics;
  readonly lifecycle: Lifecycle;
}

/**
 * What the features are built from: the core dependencies except the service metrics, which are
 * built after the features because their gauges read the features' result cache. So the wiring
 * runs one way (features, then the metrics given what they read) and nothing is patched later.
 */
export type FeatureDeps = Omit<CoreDeps, 'metrics'>;
