import { bool, int, num, oneOf, str } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/** Search, its ranking and its result cache. Ranking defaults are tuned on Vaswani (BENCHMARKS.md). */
export interface SearchSettings {
  /** Most entries in the search result cache (LRU); feeds `svc_ai_search_cache_maxsize`. @default 1000 */
  readonly cacheMaxSize: number;
  /** Seconds a cached result lives (writes invalidate the cache anyway); 0 = until evicted. @default 300 */
  readonly cacheTtlSeconds: number;
  /** Expand queries of three or more terms with RM3 pseudo-relevance feedback. @default true */
  readonly queryExpansion: boolean;
  /** RM3: top documents of the first ranking taken as relevant. @default 5 (issue 28: tuned on Vaswani, checked on the Debian known-item collection) */
  readonly expansionDocs: number;
  /** RM3: feedback terms mixed into the query. @default 40 */
  readonly expansionTerms: number;
  /** BM25 term-frequency saturation (k1); 0 = a term counts once however often it occurs. @default 0.6 */
  readonly bm25K1: number;
  /** BM25 length normalisation (b): 0 = none, 1 = full. @default 0.6 */
  readonly bm25B: number;
  /**
   * BM25+'s δ (Lv & Zhai 2011): added to every matching term's saturated tf, so a long document
   * holding a term always scores above one lacking it; 0 = plain BM25. @default 1 (the paper's
   * value; with the other ranking defaults it wins on Vaswani and on the Debian known-item
   * collection, issue 28's rule for a default: BENCHMARKS.md)
   */
  readonly bm25Delta: number;
  /**
   * Proximity (issue 28, sixth slice): scale of the sequential dependence model's window features
   * (query pairs' ordered and unordered windows, SDM's 0.1 / 0.05 against 0.85) added to the top
   * 10 of a query of three or more terms; 0 = off. @default 4 (tuned on Vaswani, checked on the
   * Debian known-item collection: BENCHMARKS.md)
   */
  readonly proximityWeight: number;
  /** Proximity: span of the unordered window (`#uwN`: the pair's terms within N − 1 tokens). @default 4 */
  readonly proximityWindow: number;
  /**
   * Folder of the persisted search index (its base segment, loaded at start instead of
   * re-indexing every item; docs/search-segments.md). `off`: never persisted.
   * @default undefined: `<DATA_DIR>/search-index` with the file store; none with the Redis store
   */
  readonly indexDir?: string;
  /**
   * A synonyms file in Solr's format (`a, b, c` equivalents, `a => b` one-way), applied at query
   * time by search and chat retrieval (docs/api.md#synonyms); read at start, so changing it
   * takes a restart and no re-index. The stack mounts it from a ConfigMap (docs/stack.md).
   * @default undefined: no synonyms
   */
  readonly synonymsFile?: string;
  /**
   * How hybrid search (issue 41) fuses its keyword and semantic rankings: `rrf`, reciprocal rank
   * fusion with k = 60 (ranks only, so BM25's unbounded scores need no calibration against
   * cosine similarities), or `normalized` (keyword scores over the best one, similarities
   * min-max, then the convex combination).
   * @default 'rrf' (docs/semantic-search.md, "Querying by meaning")
   */
  readonly hybridFusion: 'rrf' | 'normalized';
  /** Weight of the semantic ranking in hybrid search when a query gives no `semantic_ratio`, 0..1. @default 0.5 */
  readonly semanticRatio: number;
  /**
   * Semantic candidates of a query: the items nearest it over the whole collection, before any
   * filter (docs/api.md, "Search by meaning"). Semantic and hybrid results are drawn from them
   * (hybrid: with every keyword match). @default 100
   */
  readonly semanticCandidates: number;
  /**
   * Candidates a search of the vector graph examines (HNSW's ef; a search asking for more
   * neighbours examines that many): recall against latency, measured at 1M clustered vectors of
   * 384 dimensions (docs/semantic-search.md, "The graph's settings"). @default 256
   */
  readonly semanticEf: number;
}

export const DEFAULT_SEARCH: SearchSettings = {
  cacheMaxSize: 1000,
  cacheTtlSeconds: 300,
  queryExpansion: true,
  expansionDocs: 5,
  expansionTerms: 40,
  bm25K1: 0.6,
  bm25B: 0.6,
  bm25Delta: 1,
  proximityWeight: 4,
  proximityWindow: 4,
  indexDir: undefined,
  synonymsFile: undefined,
  hybridFusion: 'normalized',
  semanticRatio: 0.1,
  semanticCandidates: 100,
  semanticEf: 256,
};

/** Search by meaning's settings are left out of the ConfigMap while no embedder is configured: manifests stay as they were. */
/**
 * Hybrid ranking applies to client-provided vectors too, with no embedder: written to the
 * ConfigMap without a provider when set to other than the default.
 */
const SEMANTIC_DORMANT = { dormantWhen: { path: 'embeddings.provider', value: 'none', unlessChanged: true } } as const;

export const SEARCH_VARIABLES: readonly VariableSpec[] = [
  variable(
    'SEARCH_CACHE_SIZE',
    'search.cacheMaxSize',
    int({ min: 1, max: 1000000 }),
    'Most entries in the search result cache',
  ),
  variable(
    'SEARCH_CACHE_TTL_SECONDS',
    'search.cacheTtlSeconds',
    int({ min: 0, max: 86400 }),
    'Lifetime of a cached search result, seconds (0 = until evicted)',
  ),
  variable(
    'SEARCH_QUERY_EXPANSION',
    'search.queryExpansion',
    bool(),
    'Expand queries of three or more terms with RM3 pseudo-relevance feedback',
  ),
  variable(
    'SEARCH_EXPANSION_DOCS',
    'search.expansionDocs',
    int({ min: 1, max: 100 }),
    'RM3: top documents of the first ranking taken as relevant',
  ),
  variable(
    'SEARCH_EXPANSION_TERMS',
    'search.expansionTerms',
    int({ min: 1, max: 200 }),
    'RM3: feedback terms added to the query',
  ),
  variable('SEARCH_BM25_K1', 'search.bm25K1', num({ min: 0, max: 10 }), 'BM25 term-frequency saturation (k1)'),
  variable('SEARCH_BM25_B', 'search.bm25B', num({ min: 0, max: 1 }), 'BM25 length normalisation (b)'),
  variable(
    'SEARCH_BM25_DELTA',
    'search.bm25Delta',
    num({ min: 0, max: 10 }),
    "BM25+'s delta: a floor added to every matching term's saturated tf (0 = plain BM25)",
  ),
  variable(
    'SEARCH_PROXIMITY_WEIGHT',
    'search.proximityWeight',
    num({ min: 0, max: 16 }),
    "Proximity: scale of the query pairs' window features added to the top 10 of a query of three or more terms (0 = off)",
  ),
  variable(
    'SEARCH_PROXIMITY_WINDOW',
    'search.proximityWindow',
    int({ min: 2, max: 64 }),
    "Proximity: span of the unordered window, tokens (a pair's terms within span - 1 of each other)",
  ),
  variable(
    'INDEX_DIR',
    'search.indexDir',
    str({ pattern: /^[^\x00-\x1f]+$/, accepted: 'a folder path (no control characters), or off' }),
    'Folder of the persisted search index segment (loaded at start instead of re-indexing); default <DATA_DIR>/search-index with the file store, none with KVSTORE_URL; off = never',
  ),
  variable(
    'SEARCH_SYNONYMS_FILE',
    'search.synonymsFile',
    str({ pattern: /^[^\x00-\x1f]+$/, accepted: 'a file path (no control characters)' }),
    "Synonyms file in Solr's format (a, b, c equivalents; a => b one-way), applied at query time by search and chat; read at start (docs/api.md#synonyms). Unset: no synonyms",
  ),
  variable(
    'SEARCH_HYBRID_FUSION',
    'search.hybridFusion',
    oneOf(['rrf', 'normalized']),
    'Hybrid search: fuse the keyword and semantic rankings by normalised scores (normalized, the default: keyword scores over the best one, similarities min-max) or by reciprocal rank (rrf, k = 60); BENCHMARKS.md, search by meaning',
    SEMANTIC_DORMANT,
  ),
  variable(
    'SEARCH_SEMANTIC_RATIO',
    'search.semanticRatio',
    num({ min: 0, max: 1 }),
    'Hybrid search: weight of the semantic ranking when a query gives no semantic_ratio (0 = keyword only, 1 = semantic only)',
    SEMANTIC_DORMANT,
  ),
  variable(
    'SEARCH_SEMANTIC_CANDIDATES',
    'search.semanticCandidates',
    int({ min: 1, max: 10000 }),
    'Semantic and hybrid search: the items nearest the query (over the whole collection, before filters) that semantic results are drawn from',
    SEMANTIC_DORMANT,
  ),
  variable(
    'SEARCH_SEMANTIC_EF',
    'search.semanticEf',
    int({ min: 16, max: 4096 }),
    "Semantic and hybrid search: candidates a search of the vector graph examines (HNSW's ef; more: better recall, slower queries); docs/semantic-search.md, the vector graph's settings",
    SEMANTIC_DORMANT,
  ),
];
