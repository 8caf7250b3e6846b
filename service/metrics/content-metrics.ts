import { Counter, Gauge, type Registry } from 'prom-client';
import { WRITE_STATES, type CompactionStatus, type WriteStatus } from '../content/content-store';
import type { WriteConfirmation } from '../kvstore/connection';
import { METRIC_FAMILIES as F } from '../../contract';

/** Every `state` of the write-confirmation gauge, always all present (a state set). */
export const WRITE_CONFIRMATION_STATES: readonly WriteConfirmation[] = ['ok', 'no_replica', 'not_on_disk'];

/**
 * `svc_ai_search_content_compaction_failures_total`: failed compactions of a store that compacts
 * (the file store), read from it at scrape time. Present at 0 from the start, so the first
 * failure is an increase that `increase()` sees. Registered once per registry.
 */
export function registerContentMetrics(registry: Registry, compaction: () => CompactionStatus): void {
  if (registry.getSingleMetric(F.contentCompactionFailuresTotal.name)) return;
  let seen = 0;
  new Counter({
    name: F.contentCompactionFailuresTotal.name,
    help: 'Failed compactions of the DATA_DIR content store (each leaves the previous files in use, is logged and retried with backoff; writes are unaffected)',
    registers: [registry],
    collect() {
      const now = compaction().failures;
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/**
 * `svc_ai_search_kvstore_write_confirmation{state}`: whether content writes into the kvstore are
 * confirmed at `KVSTORE_DURABILITY` (the `/health` field `kvstore_writes`), read at scrape time:
 * 1 for the current state, 0 for the others, every state always present. Registered only where
 * content is in the kvstore (like the compaction counter, only where the store compacts): a pod
 * with the file store exposes no such series. Registered once per registry.
 */
export function registerKvstoreWriteMetrics(registry: Registry, writes: () => WriteConfirmation): void {
  if (registry.getSingleMetric(F.kvstoreWriteConfirmation.name)) return;
  new Gauge({
    name: F.kvstoreWriteConfirmation.name,
    help: 'Whether content writes are confirmed at KVSTORE_DURABILITY (/health kvstore_writes): 1 for the current state (ok, no_replica, not_on_disk), 0 for the others',
    labelNames: F.kvstoreWriteConfirmation.labels,
    registers: [registry],
    collect() {
      const now = writes();
      for (const state of WRITE_CONFIRMATION_STATES) this.set({ state }, state === now ? 1 : 0);
    },
  });
}

/**
 * `svc_ai_search_content_write_state{state}`: whether the file store takes writes (the `/health`
 * field `content.writes.status`), read at scrape time: 1 for the current state (`ok`,
 * `disk_full`, `failing`, `read_only`), 0 for the others, every state always present. Registered
 * only where the store writes files (a pod with content in the kvstore has no such series).
 * Registered once per registry.
 */
export function registerContentWriteMetrics(registry: Registry, writes: () => WriteStatus): void {
  if (registry.getSingleMetric(F.contentWriteState.name)) return;
  new Gauge({
    name: F.contentWriteState.name,
    help: 'Whether the DATA_DIR content store takes writes (/health content.writes.status): 1 for the current state (ok, disk_full, failing, read_only), 0 for the others',
    labelNames: F.contentWriteState.labels,
    registers: [registry],
    collect() {
      const now = writes().state;
      for (const state of WRITE_STATES) this.set({ state }, state === now ? 1 : 0);
    },
  });
}
