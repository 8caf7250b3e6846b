import type { Logger } from 'pino';
import type { Settings } from '../../configs';
import { QueryEmbeddingCache, type Embedder, type VectorFeed } from '../embeddings';
import type { SemanticSearch } from './search-service';
import { SemanticIndex } from './semantic-index';
import { VectorStore } from './vectors';

/**
 * Longest wait for a query's vector, milliseconds (at most `EMBEDDINGS_TIMEOUT_MS`): a search
 * waits no longer for the embedder, then answers by keyword (`semantic: 'degraded'`).
 */
export const QUERY_EMBED_TIMEOUT_MS = 2000;
/** Retries of a query's embedding call: one, a search cannot wait for backoff. */
export const QUERY_EMBED_RETRIES = 1;
/**
 * Longest wait of the start for the vector index, ms: a larger one loads in the background, semantic
 * and hybrid queries answering by keyword (`semantic: 'loading'`) until it is loaded (issue 41:
 * restart to ready within 2 s of a start without vectors).
 */
export const SEMANTIC_START_WAIT_MS = 1000;

/** A feed without vectors: what the search side follows until the content side provides one. */
export const NO_VECTORS: VectorFeed = {
  current: () => [],
  subscribe: () => () => undefined,
  pending: () => 0,
  status: () => 'off',
};

/** What `createSemanticSearch` is built from. */
export interface SemanticSearchDeps {
  /** The items' vectors (the content side). */
  readonly feed: VectorFeed;
  /** Embeds queries' words; absent with `EMBEDDINGS_PROVIDER=none` (queries by `vector` only). */
  readonly embedder?: Embedder;
  /** The search segment's folder: the vector index is persisted beside it. @default not persisted */
  readonly dir?: string;
  readonly logger: Logger;
}

/**
 * Search by meaning's query side as the settings ask for it (issue 41): a `SemanticIndex` fed by
 * `feed` (persisted beside the search segment when `dir` is given), queries embedded through the
 * query cache (`EMBEDDINGS_QUERY_CACHE_SIZE`) with a short timeout and one retry, and the fusion
 * settings (`SEARCH_HYBRID_FUSION`, `SEARCH_SEMANTIC_RATIO`, `SEARCH_SEMANTIC_CANDIDATES`); the vector graph's
 * searches examine `SEARCH_SEMANTIC_EF` candidates.
 */
export function createSemanticSearch(
  settings: Pick<Settings, 'embeddings' | 'search'>,
  deps: SemanticSearchDeps,
): SemanticSearch {
  const e = settings.embeddings;
  const { embedder, logger } = deps;
  const key = embedder ? `${embedder.model}/${embedder.dimensions}` : `client/${e.dimensions}`;
  const store = deps.dir ? new VectorStore({ dir: deps.dir, logger }) : undefined;
  const index = new SemanticIndex({
    feed: deps.feed,
    dims: e.dimensions,
    key,
    store,
    logger,
    vectors: { graph: { expansionSearch: settings.search.semanticEf } },
    startWaitMs: SEMANTIC_START_WAIT_MS,
  });
  const cache = embedder ? new QueryEmbeddingCache(embedder, e.queryCacheSize) : undefined;
  const timeoutMs = Math.min(QUERY_EMBED_TIMEOUT_MS, e.timeoutMs);
  return {
    index,
    ...(cache && {
      embedQuery: (text: string) =>
        cache.embedQuery(text, { signal: AbortSignal.timeout(timeoutMs), maxRetries: QUERY_EMBED_RETRIES }),
    }),
    fusion: settings.search.hybridFusion,
    ratio: settings.search.semanticRatio,
    candidates: settings.search.semanticCandidates,
  };
}
