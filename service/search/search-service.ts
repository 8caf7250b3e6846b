import { createHash } from 'node:crypto';
import type { ContentService } from '../content/content-service';
import { normalFilter, type FacetName, type ItemFilter } from '../content/item-filter';
import type { SearchMode, SearchResponse, SearchResult, SearchSort } from '../http/contract/search';
import type { FusionMethod } from './fusion';
import { meaningPage, type HybridCapableIndex } from './hybrid-search';
import type { ResultCache } from './result-cache';
import type { IndexHit, SearchIndex } from './search-index';
import type { SemanticIndex } from './semantic-index';

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
  /** @default hybrid when items have vectors, else keyword */
  readonly mode?: SearchMode;
  /** Weight of the semantic ranking in hybrid search, 0..1. @default `SEARCH_SEMANTIC_RATIO` */
  readonly semanticRatio?: number;
  /** A query vector (`EMBEDDINGS_DIMENSIONS` finite numbers): searched by meaning instead of embedding `q`. */
  readonly vector?: readonly number[];
}

/** Search by meaning as the search service uses it (issue 41). */
export interface SemanticSearch {
  readonly index: SemanticIndex;
  /** The vector of a query's words (the embedder through its query cache); absent without an embedder. */
  readonly embedQuery?: (text: string) => Promise<Float32Array>;
  readonly fusion: FusionMethod;
  /** `SEARCH_SEMANTIC_RATIO`. */
  readonly ratio: number;
  /** `SEARCH_SEMANTIC_CANDIDATES`. */
  readonly candidates: number;
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
    /** Search by meaning: absent, every search is by keyword. */
    readonly semantic?: SemanticSearch,
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
  static key(req: SearchRequest, meaning: unknown[] = []): string {
    const q = req.q.trim().toLowerCase().replace(/\s+/g, ' ');
    const facets = [...new Set(req.facets ?? [])].sort();
    return JSON.stringify([
      ...meaning,
      q,
      normalFilter(req.filter),
      req.sort ?? (q ? 'relevance' : 'date:desc'),
      facets,
      facets.includes('tag') ? (req.facetLimit ?? 20) : 0,
      req.limit,
      req.offset,
    ]);
  }

  /** The mode a request is answered in when its words or vector allow it. */
  private modeOf(req: SearchRequest): SearchMode {
    if (!this.semantic || !this.index.sorted) return 'keyword';
    // Hybrid by default only when it can be done: items have vectors and the query has one, or its words can be embedded.
    const able = this.semantic.index.hasVectors && (req.vector !== undefined || this.semantic.embedQuery !== undefined);
    const mode = req.mode ?? (able ? 'hybrid' : 'keyword');
    // Without words there is nothing to fuse: every item matches them (browsing).
    return mode === 'hybrid' && !req.q.trim() ? 'semantic' : mode;
  }

  async search(req: SearchRequest): Promise<SearchResponse> {
    const started = performance.now();
    const mode = this.modeOf(req);
    if (mode === 'keyword') return this.keyword(req, started);
    const s = this.semantic!;
    // The vector index still loads at the start: by keyword, saying so.
    if (s.index.loading) return { ...(await this.keyword(req, started, false)), semantic: 'loading' };
    const ratio = req.semanticRatio ?? s.ratio;
    const vectorKey = req.vector ? vectorHash(req.vector) : '';
    const key = SearchService.key(req, [mode, ratio, vectorKey, s.index.generation]);
    const hit = this.cache.get(key);
    if (hit) return { ...hit, took_ms: elapsed(started), cached: true };
    let vector: ArrayLike<number> | undefined = req.vector;
    let semantic: CachedSearch['semantic'];
    if (!vector && req.q.trim() && s.embedQuery) {
      try {
        vector = await s.embedQuery(req.q);
        s.index.queryEmbedded();
      } catch {
        // Degraded, not down (issue 41): the keyword answer, saying so.
        s.index.queryFailed();
        semantic = 'degraded';
      }
    } else if (!vector) semantic = s.embedQuery ? undefined : 'off';
    if (!vector) return { ...(await this.keyword(req, started, false)), ...(semantic ? { semantic } : {}) };
    const index: HybridCapableIndex = {
      search: (q) => this.index.search(q),
      sorted: (ids, sort) => this.index.sorted!(ids, sort),
    };
    const page = await meaningPage(index, {
      mode,
      text: req.q,
      filter: req.filter,
      sort: req.sort,
      facets: req.facets,
      facetLimit: req.facetLimit,
      limit: req.limit,
      offset: req.offset,
      // A promise (the graph answers from its worker thread): the keyword search starts meanwhile.
      nearest: s.index.nearest(vector, s.candidates),
      ratio,
      fusion: s.fusion,
      candidates: s.candidates,
    });
    const ids = page.hits.map((h) => h.id);
    // The page's snippets only (the keyword search behind a hybrid page made none), the words planned once.
    const snippets = this.index.snippetsOf
      ? this.index.snippetsOf(ids, req.q)
      : ids.map((id) => this.index.snippetOf?.(id, req.q) ?? '');
    const body: CachedSearch = {
      query: req.q,
      mode,
      total: page.total,
      results: this.results(page.hits.map((h, i) => ({ ...h, snippet: snippets[i] }))),
      ...(page.facets ? { facets: page.facets } : {}),
    };
    this.cache.set(key, body);
    return { ...body, took_ms: elapsed(started), cached: false };
  }

  /**
   * The items a chat answer draws on (issue 41), best first: the search's default mode (hybrid
   * when items have vectors and the words can be embedded, else keyword), with the same filters.
   */
  async retrieve(text: string, filter: ItemFilter | undefined, limit: number): Promise<string[]> {
    const res = await this.search({ q: text, ...(filter ? { filter } : {}), limit, offset: 0 });
    return res.results.map((r) => r.id);
  }

  /** Today's search by words; `cache`: whether the answer is kept (a degraded answer is not). */
  private async keyword(req: SearchRequest, started: number, cache = true): Promise<SearchResponse> {
    const key = SearchService.key(req);
    const hit = cache ? this.cache.get(key) : undefined;
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
    const body: CachedSearch = {
      query: req.q,
      mode: 'keyword',
      total: page.total,
      results: this.results(page.hits),
      ...(page.facets ? { facets: page.facets } : {}),
    };
    if (cache) this.cache.set(key, body);
    return { ...body, took_ms: elapsed(started), cached: false };
  }

  /** The results of hits, from the in-memory copy (an item deleted meanwhile left out). */
  private results(hits: readonly IndexHit[]): SearchResult[] {
    const results: SearchResult[] = [];
    for (const h of hits) {
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
    return results;
  }
}

/** A query vector's part of a cache key. */
function vectorHash(v: readonly number[]): string {
  return createHash('sha1').update(new Float64Array(v)).digest('base64');
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
