import { Counter, type Registry } from 'prom-client';
import type { CompactionStatus } from '../content/store';
import { METRIC_PREFIX } from './service-metrics';

/** The content store's metric names (alert rules reference them; keep them stable). */
export const CONTENT_METRICS = {
  /** counter: failed compactions of the file store (`DATA_DIR`); each is retried with backoff. */
  compactionFailures: `${METRIC_PREFIX}_content_compaction_failures_total`,
} as const;

/**
 * `svc_ai_search_content_compaction_failures_total`: failed compactions of a store that compacts
 * (the file store), read from it at scrape time. Present at 0 from the start, so the first
 * failure is an increase that `increase()` sees. Registered once per registry.
 */
export function registerContentMetrics(registry: Registry, compaction: () => CompactionStatus): void {
  if (registry.getSingleMetric(CONTENT_METRICS.compactionFailures)) return;
  let seen = 0;
  new Counter({
    name: CONTENT_METRICS.compactionFailures,
    help: 'Failed compactions of the DATA_DIR content store (each leaves the previous files in use, is logged and retried with backoff; writes are unaffected)',
    registers: [registry],
    collect() {
      const now = compaction().failures;
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}
