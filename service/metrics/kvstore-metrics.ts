import { Counter, Gauge, type Registry } from 'prom-client';
import type { KvstoreMode } from '../../configs';
import type { KvstoreState } from '../kvstore/connection';
import { METRIC_FAMILIES as F } from '../../contract';

/** Every state the gauge reports a series for (all present, one of them 1). */
export const KVSTORE_STATES: readonly KvstoreState[] = [
  'not_configured',
  'connecting',
  'connected',
  'degraded',
  'unresponsive',
  'disconnected',
];

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
export function registerKvstoreStateMetric(
  registry: Registry,
  stores: Readonly<Record<string, KvstoreStateSource>>,
): Gauge {
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

/**
 * `svc_ai_search_kvstore_evicted_keys_total{store}`: keys each store's server evicted because it
 * reached `maxmemory`, seen by this process (the rises of INFO stats `evicted_keys` it read,
 * eviction-watch.ts), read at scrape time; 0 from the start for every store, configured or not.
 * Every replica watches the same server, so alert on `max`, never `sum`, over replicas.
 */
export function registerKvstoreEvictionMetric(
  registry: Registry,
  stores: Readonly<Record<string, { readonly eviction: { readonly evictedKeys: number } }>>,
): Counter {
  const seen = new Map<string, number>();
  return new Counter({
    name: F.kvstoreEvictedKeysTotal.name,
    help: 'Keys the key-value store evicted (maxmemory reached) while this process watched, per store (INFO stats evicted_keys); content keys among them are reloaded and written back (/health content.store_losses)',
    labelNames: F.kvstoreEvictedKeysTotal.labels,
    registers: [registry],
    collect() {
      for (const [store, source] of Object.entries(stores)) {
        const now = source.eviction.evictedKeys;
        const before = seen.get(store);
        if (before === undefined) this.inc({ store }, now);
        else if (now > before) this.inc({ store }, now - before);
        seen.set(store, now);
      }
    },
  });
}
