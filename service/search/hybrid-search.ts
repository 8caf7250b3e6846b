import type { FacetName, ItemFilter } from '../content/item-filter';
import type { SearchMode, SearchSort } from '../http/contract/search';
import type { FacetCounts } from './browse';
import { fuse, type FusionMethod, type ScoredId } from './fusion';
import type { IndexQuery, SearchIndex } from './search-index';

/** What a semantic or hybrid page needs of the keyword index beyond `SearchIndex`. */
export type HybridCapableIndex = Pick<SearchIndex, 'search'> & {
  /** Ids in a sort's order (not relevance), ties by id; ids not indexed left out. */
  sorted(ids: readonly string[], sort: Exclude<SearchSort, 'relevance'>): Promise<string[]>;
};

/** One semantic or hybrid search, its query vector found. */
export interface MeaningQuery {
  readonly mode: Exclude<SearchMode, 'keyword'>;
  /** The words (hybrid: searched by keyword too). */
  readonly text: string;
  readonly filter?: ItemFilter;
  /** @default relevance */
  readonly sort?: SearchSort;
  readonly facets?: readonly FacetName[];
  readonly facetLimit?: number;
  readonly limit: number;
  readonly offset: number;
  /** The semantic candidates: the items nearest the query vector over the whole collection, best first. */
  readonly nearest: readonly ScoredId[];
  /** Weight of the semantic ranking (hybrid). */
  readonly ratio: number;
  readonly fusion: FusionMethod;
  /** Keyword results fused (hybrid): the first this many (`SEARCH_SEMANTIC_CANDIDATES`). */
  readonly candidates: number;
}

/** A page of a semantic or hybrid search: ids with their scores, the total and the facets of the result set. */
export interface MeaningPage {
  readonly total: number;
  readonly hits: readonly ScoredId[];
  readonly facets?: FacetCounts;
}

/**
 * A page of search by meaning (docs/api.md, "Search by meaning"). With C the semantic candidates
 * (`nearest`), F the filter and M the keyword matches of the words:
 *
 * - semantic: the result set is C ∩ F; by relevance in similarity order (score: the cosine
 *   similarity), else in the sort's order.
 * - hybrid: the result set is (M ∪ C) ∩ F. By relevance: the fusion (`fuse`) of the first
 *   `candidates` keyword results and C ∩ F, then the keyword matches past them that C does not hold, in
 *   keyword order, scored 0; else every member in the sort's order.
 *
 * `total` is the size of the result set and the facets count its members, each facet without its
 * own part of the filter (disjunctive), exactly: the keyword index counts M and adds the members
 * of C that are no keyword match (`IndexQuery.also`).
 */
export async function meaningPage(index: HybridCapableIndex, q: MeaningQuery): Promise<MeaningPage> {
  const sort = q.sort ?? 'relevance';
  const end = q.offset + q.limit;
  const similarity = new Map(q.nearest.map((h) => [h.id, h.score]));
  const base: IndexQuery = {
    text: q.text,
    filter: q.filter,
    sort,
    facets: q.facets,
    facetLimit: q.facetLimit,
    offset: 0,
    limit: end,
    snippets: false,
    also: q.nearest.map((h) => h.id),
  };
  const counts = (p: { total: number; facets?: FacetCounts }) => ({
    total: p.total,
    ...(p.facets && { facets: p.facets }),
  });
  if (q.mode === 'semantic') {
    const page = await index.search({ ...base, keyword: false });
    const kept = page.kept ?? [];
    const ids = sort === 'relevance' ? kept : await index.sorted(kept, sort);
    const hits = ids.slice(q.offset, end).map((id) => ({ id, score: sort === 'relevance' ? similarity.get(id)! : 0 }));
    return { hits, ...counts(page) };
  }
  if (sort !== 'relevance') {
    const page = await index.search(base);
    const ids = await index.sorted([...page.hits.map((h) => h.id), ...(page.extra ?? [])], sort);
    return { hits: ids.slice(q.offset, end).map((id) => ({ id, score: 0 })), ...counts(page) };
  }
  const n = q.candidates;
  const page = await index.search({ ...base, limit: Math.max(n, end) });
  const keyword = page.hits.slice(0, n).map((h) => ({ id: h.id, score: h.score }));
  const semantic = (page.kept ?? []).map((id) => ({ id, score: similarity.get(id)! }));
  const fused: ScoredId[] = fuse(keyword, semantic, { ratio: q.ratio, method: q.fusion });
  if (fused.length < end) {
    const seen = new Set(fused.map((h) => h.id));
    for (const h of page.hits.slice(n)) if (!seen.has(h.id)) fused.push({ id: h.id, score: 0 });
  }
  return { hits: fused.slice(q.offset, end).map((h) => ({ id: h.id, score: h.score })), ...counts(page) };
}
