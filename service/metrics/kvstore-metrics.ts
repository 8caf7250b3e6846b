import { Gauge, type Registry } from 'prom-client';
import type { KvstoreMode } from '../../configs';
import type { KvstoreState } from '../kvstore/connection';
import { METRIC_FAMILIES as F } from '../../contract';

/** Every state the gauge reports a series for (all present, one of them 1). */
export const KVSTORE_STATES: readonly KvstoreState[] = ['not_configured', 'connecting', 'connected', 'degraded', 'unresponsive', 'disconnected'];

/** What the gauge reads of one store connection (a KvstoreConnection). */
export interface KvstoreStateSource {
  readonly state: KvstoreState;
  readonly mode: KvstoreMode;
}

/**
 * `svc_ai_search_kvstore_state{store, mode, state}`: 1 for each store's current state, 0 for the
 * others, read at scrape time. `store` is `kvstore` (content, and rate limits unless they have their
 * own) or `ratelimit` (`RATELIMIT_STORAGE_URL`); `mode` is `standalone`, `cluster` or `sentinel`.
 */
export function registerKvstoreStateMetric(registry: Registry, stores: Readonly<Record<string, KvstoreStateSource>>): Gauge {
  return new Gauge({
    name: F.kvstoreState.name,
    help: 'Key-value store state per store and mode: 1 for the current state (connected | degraded | unresponsive | disconnected | connecting | not_configured), 0 for the others',
    labelNames: F.kvstoreState.labels,
    registers: [registry],
    collect() {
      for (const [store, source] of Object.entries(stores)) {
        const now = source.state;
        for (const state of KVSTORE_STATES) this.set({ store, mode: source.mode, state }, state === now ? 1 : 0);
      }
    },
  });
}
