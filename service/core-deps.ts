import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Settings } from '../configs';
import type { Clock } from './clock';
import type { KvstoreConnection } from './kvstore/connection';
import type { Lifecycle } from './lifecycle';
import type { RequestStats } from './metrics/request-stats';
import type { ServiceMetrics } from './metrics/service-metrics';

/**
 * Dependencies every part of the service may use. Injected, never module-level singletons.
 * Its own module (not deps.ts, which wires them) so the features and routes that take it do not
 * import the wiring that imports them.
 */
export interface CoreDeps {
  readonly settings: Settings;
  readonly logger: Logger;
  /** prom-client registry of this app instance (never the global one). */
  readonly registry: Registry;
  readonly clock: Clock;
  /** The shared kvstore connection (state `not_configured` without KVSTORE_URL). */
  readonly kvstore: KvstoreConnection;
  /** The rate limiter's own store connection: RATELIMIT_STORAGE_URL, else the shared kvstore. */
  readonly rateLimitStore: KvstoreConnection;
  readonly stats: RequestStats;
  readonly metrics: ServiceMetrics;
  readonly lifecycle: Lifecycle;
}
