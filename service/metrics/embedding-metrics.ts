import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { EMBEDDING_ERROR_REASONS, METRIC_FAMILIES as F, type EmbeddingErrorReason } from '../../contract';

/** Seconds of one embeddings call, from a quick local server to a slow provider's timeout. */
export const EMBEDDING_CALL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The embedder's families (issue 41): calls, errors by reason (every reason present from 0, so
 * the first failure is an increase `increase()` sees), call seconds, and the backlog gauge
 * `svc_ai_search_embeddings_pending`. Registered only where an embedder is configured, like the
 * content stores' families only where that store is used. Implements the embedder's
 * `EmbeddingCallObserver` (`call`).
 */
export class EmbeddingMetrics {
  private readonly calls: Counter;
  private readonly errors: Counter<'reason'>;
  private readonly duration: Histogram;
  private pendingSource: () => number = () => 0;

  constructor(registry: Registry) {
    this.calls = new Counter({
      name: F.embeddingCallsTotal.name,
      help: 'Calls to the embeddings provider (each attempt, retries included)',
      registers: [registry],
    });
    this.errors = new Counter({
      name: F.embeddingErrorsTotal.name,
      help: `Failed calls to the embeddings provider by reason (${EMBEDDING_ERROR_REASONS.join(', ')})`,
      labelNames: F.embeddingErrorsTotal.labels,
      registers: [registry],
    });
    for (const reason of EMBEDDING_ERROR_REASONS) this.errors.inc({ reason }, 0);
    this.duration = new Histogram({
      name: F.embeddingCallDuration.name,
      help: 'Seconds of one call to the embeddings provider, failed ones included',
      buckets: EMBEDDING_CALL_BUCKETS,
      registers: [registry],
    });
    const read = () => this.pendingSource();
    new Gauge({
      name: F.embeddingsPending.name,
      help: 'Items stored but not yet embedded at their current version (the embedding backlog)',
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** One provider call ended after `seconds`; `failure` is why it failed. */
  call(seconds: number, failure?: EmbeddingErrorReason): void {
    this.calls.inc();
    this.duration.observe(seconds);
    if (failure) this.errors.inc({ reason: failure });
  }

  /** Where the backlog gauge reads its figure at scrape time (the embedding worker's queue). */
  readPendingFrom(source: () => number): void {
    this.pendingSource = source;
  }
}
