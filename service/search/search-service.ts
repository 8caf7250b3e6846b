import type { ContentService } from '../content/content-service';
import type { ItemType } from '../content/item';
import type { SearchResponse, SearchResult } from '../http/contract/search';
import type { ResultCache } from './result-cache';
import type { SearchIndex } from './search-index';

/** A validated search request. */
export interface SearchRequest {
  readonly q: string;
  readonly type?: ItemType;
  readonly tag?: string;
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
    return JSON.stringify([
      req.q.trim().toLowerCase().replace(/\s+/g, ' '),
      req.type ?? '',
      req.tag?.toLowerCase() ?? '',
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
      type: req.type,
      tag: req.tag,
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
    const body: CachedSearch = { query: req.q, total: page.total, results };
    this.cache.set(key, body);
    return { ...body, took_ms: elapsed(started), cached: false };
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
