import { Router } from 'express';
import type { CoreDeps } from '../deps';
import type { CacheStats } from '../metrics/service-metrics';

/** The functional API (search, chat, ingest, upload, export, eval, content) as the app sees it. */
export interface Features {
  /** Mounted after the rate limiter and the JSON body parser. */
  readonly router: Router;
  /** The search result cache, for the cache gauges. */
  readonly cache: CacheStats;
  /** Loads content and builds indexes; the service is ready after it resolves. */
  start(): Promise<void>;
  /** Stops background work and closes stores. */
  close(): Promise<void>;
}

/** Builds the functional API. (Placeholder until the content issue lands.) */
export function createFeatures(_deps: CoreDeps): Features {
  return {
    router: Router(),
    cache: { size: () => 0, maxSize: () => _deps.settings.search.cacheMaxSize },
    start: async () => undefined,
    close: async () => undefined,
  };
}
