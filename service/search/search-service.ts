import type { ContentService } from '../content/content-service';
import { normalFilter, type FacetName, type ItemFilter } from '../content/item-filter';
import type { SearchResponse, SearchResult, SearchSort } from '../http/contract/search';
import type { ResultCache } from './result-cache';
import type { SearchIndex } from './search-index';

/** A validated search request. */
export interface SearchRequest {
  /** Empty: every item the filter keeps. */
  readonly q: string;
  readonly filter?: ItemFilter;
  /** @default relevance with words, date:desc without */
  readonly sort?: SearchSort;
  readonly facets?: readonly FacetName[];
  /** Most tags in the tag facet. @default 20 */
  readonly facetLimit?: number;
  readonly limit: number;
  readonly offset: number;
}

/** What the result cache keeps of a response. */
export type CachedSearch = Omit<SearchResponse, 'took_ms' | 'cached'>;

/**
 * Search over the in-memory copy: the index ranks, the in-memory copy supplies titles and URLs, and an LRU
 * cache answers repeated queries until the next write. The index follows every content change
 * before the write that caused it is acknowledged.
 */
export class SearchService {
  constructor(
    readonly index: SearchIndex,
    private readonly content: ContentService,
    readonly cache: ResultCache<CachedSearch>,
  ) {
    content.onChange(async (change) => {
      if (change.reset) await index.replaceAll(change.all ?? []);
      else {
        if (change.removed.length) await index.remove(change.removed);
        await index.upsert(change.upserted);
      }
      cache.clear();
    });
  }

  /** Cache key: every parameter that changes the answer, normalized. */
  static key(req: SearchRequest): string {
    const q = req.q.trim().toLowerCase().replace(/\s+/g, ' ');
    const facets = [...new Set(req.facets ?? [])].sort();
    return JSON.stringify([
      q,
      normalFilter(req.filter),
      req.sort ?? (q ? 'relevance' : 'date:desc'),
      facets,
      facets.includes('tag') ? (req.facetLimit ?? 20) : 0,
      req.limit,
      req.offset,
    ]);
  }

  async search(req: SearchRequest): Promise<SearchResponse> {
    const started = performance.now();
    const key = SearchService.key(req);
    const hit = this.cache.get(key);
    if (hit) return { ...hit, took_ms: elapsed(started), cached: true };
    const page = await this.index.search({
      text: req.q,
      filter: req.filter,
      sort: req.sort,
      facets: req.facets,
      facetLimit: req.facetLimit,
      limit: req.limit,
      offset: req.offset,
    });
    const results: SearchResult[] = [];
    for (const h of page.hits) {
      const item = this.content.get(h.id);
      if (!item) continue;
      results.push({
        id: item.id,
        type: item.type,
        title: item.title,
        snippet: h.snippet,
        score: h.score,
        url: item.url ?? null,
      });
    }
    const body: CachedSearch = {
      query: req.q,
      total: page.total,
      results,
      ...(page.facets ? { facets: page.facets } : {}),
    };
    this.cache.set(key, body);
    return { ...body, took_ms: elapsed(started), cached: false };
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
