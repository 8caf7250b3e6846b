import { int } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/** Search and its result cache. */
export interface SearchSettings {
  /** Most entries in the search result cache (LRU); feeds `svc_ai_search_cache_maxsize`. @default 1000 */
  readonly cacheMaxSize: number;
  /** Seconds a cached result lives (writes invalidate the cache anyway); 0 = until evicted. @default 300 */
  readonly cacheTtlSeconds: number;
}

export const DEFAULT_SEARCH: SearchSettings = { cacheMaxSize: 1000, cacheTtlSeconds: 300 };

export const SEARCH_VARIABLES: readonly VariableSpec[] = [
  variable('SEARCH_CACHE_SIZE', 'search.cacheMaxSize', int({ min: 1, max: 1000000 }), 'Most entries in the search result cache'),
  variable('SEARCH_CACHE_TTL_SECONDS', 'search.cacheTtlSeconds', int({ min: 0, max: 86400 }), 'Lifetime of a cached search result, seconds (0 = until evicted)'),
];
