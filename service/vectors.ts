import type { ContentService } from './content/content-service';
import type { ContentStore } from './content/content-store';
import type { FeatureDeps } from './core-deps';
import { createEmbedder, StoredVectorFeed, type Embedder, type VectorFeed } from './embeddings';
import { EmbeddingMetrics } from './metrics/embedding-metrics';
import { METRICS } from '../contract';

/** The content side of search by meaning, as the composition root wires it (issue 41). */
export interface VectorSide {
  /** The stored items' vectors and their changes (the search side's vector index reads it). */
  readonly feed: VectorFeed;
  /**
   * The embedder (`EMBEDDINGS_PROVIDER`), its tokens counted in `svc_ai_search_total_tokens_used`
   * and its calls in the embedding metrics; absent with `none`. One instance for items and queries.
   */
  readonly embedder: Embedder | undefined;
  /** After the content service started: reads the stored vectors, starts the worker. */
  start(): Promise<void>;
  /** Stops the worker (before the store closes). */
  close(): Promise<void>;
}

/**
 * The embedder the settings ask for (with its metrics) and the vector feed over the content store:
 * with `EMBEDDINGS_PROVIDER=none` the feed holds client vectors only and embeds nothing.
 */
export function createVectorSide(deps: FeatureDeps, content: ContentService, store: ContentStore): VectorSide {
  const { settings, logger } = deps;
  let metrics: EmbeddingMetrics | undefined;
  // Once per registry (a test may build two apps on one), and only where an embedder is configured.
  if (settings.embeddings.provider !== 'none' && !deps.registry.getSingleMetric(METRICS.embeddingsPending))
    metrics = new EmbeddingMetrics(deps.registry);
  const embedder = createEmbedder(settings, {
    tokens: deps.stats,
    logger: logger.child({ component: 'embedder' }),
    ...(metrics ? { observer: metrics } : {}),
  });
  const feed = new StoredVectorFeed({
    content,
    records: store.vectors,
    embedder,
    maxPassages: settings.embeddings.maxPassages,
    dimensions: settings.embeddings.dimensions,
    leaseMs: settings.embeddings.claimLeaseMs,
    // A backlog waits as a single call's retries do: from 1 s, doubling, at most EMBEDDINGS_RETRY_MAX_WAIT_MS.
    backoff: {
      initialMs: Math.min(1000, settings.embeddings.retryMaxWaitMs),
      maxMs: settings.embeddings.retryMaxWaitMs,
    },
    logger: logger.child({ component: 'vectors' }),
  });
  metrics?.readPendingFrom(() => feed.pending());
  return {
    feed,
    embedder,
    start: () => feed.start(),
    close: () => feed.close(),
  };
}
