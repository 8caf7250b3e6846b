import type { FacetName, ItemFilter } from '../content/item-filter';
import type { SearchMode, SearchSort } from '../http/contract/search';
import type { FacetCounts } from './browse';
import { fuse, type FusionMethod, type ScoredId } from './fusion';
import type { IndexPage, IndexQuery, SearchIndex } from './search-index';

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
  /** Keyword results fused (hybrid by `rrf`): the first this many (`SEARCH_SEMANTIC_CANDIDATES`). */
  readonly candidates: number;
}

/**
 * A `MeaningQuery` whose semantic candidates may still be coming (a vector search running
 * meanwhile, say in a worker): a hybrid search by relevance starts the keyword search at once and
 * reads the candidates after its passes over the postings, so the two run side by side.
 */
export type PendingMeaningQuery = Omit<MeaningQuery, 'nearest'> & {
  readonly nearest: readonly ScoredId[] | PromiseLike<readonly ScoredId[]>;
};

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
 * - hybrid: the result set is (M ∪ C) ∩ F. By relevance: `normalized`, the fusion (`fuse`, the
 *   keyword scores over the best one) of every keyword match and C ∩ F, for which the keyword
 *   search need go no deeper than the page (`fusedQuery`); `rrf`, the fusion of the first
 *   `candidates` keyword results and C ∩ F, then the keyword matches past them that C does not
 *   hold, in keyword order, scored 0. Else every member in the sort's order.
 *
 * `total` is the size of the result set and the facets count its members, each facet without its
 * own part of the filter (disjunctive), exactly: the keyword index counts M and adds the members
 * of C that are no keyword match (`IndexQuery.also`).
 *
 * `nearest` may be a promise (a vector search running meanwhile): a hybrid search by relevance
 * then runs the keyword search beside it, the same page.
 */
export async function meaningPage(index: HybridCapableIndex, q: PendingMeaningQuery): Promise<MeaningPage> {
  const sort = q.sort ?? 'relevance';
  const end = q.offset + q.limit;
  if (q.mode === 'hybrid' && sort === 'relevance' && !Array.isArray(q.nearest)) return hybridPage(index, q, sort, end);
  return pageOf(index, { ...q, nearest: await q.nearest }, sort, end);
}

/** A hybrid page by relevance: the keyword search started before the candidates are in. */
async function hybridPage(
  index: HybridCapableIndex,
  q: PendingMeaningQuery,
  sort: SearchSort,
  end: number,
): Promise<MeaningPage> {
  const nearest = Promise.resolve(q.nearest);
  const also = nearest.then((hits) => hits.map((h) => h.id));
  // Read by the index after its passes; a failed vector search is reported below, not here.
  also.then(undefined, () => undefined);
  const pending = index.search(fusedQuery(q, sort, end, also));
  let candidates: readonly ScoredId[];
  try {
    candidates = await nearest;
  } finally {
    // The index holds its gate until it has read `also`: never left running on its own.
    await pending.catch(() => undefined);
  }
  return fused(q, await pending, candidates, end);
}

/** The index's query for a page of search by meaning; `also`: the candidates' ids. */
function indexQuery(
  q: PendingMeaningQuery,
  sort: SearchSort,
  end: number,
  also: IndexQuery['also'],
  limit = end,
): IndexQuery {
  return {
    text: q.text,
    filter: q.filter,
    sort,
    facets: q.facets,
    facetLimit: q.facetLimit,
    offset: 0,
    limit,
    snippets: false,
    also,
  };
}

/**
 * The keyword search a page by relevance fuses: by `rrf` the first `candidates` results (their
 * ranks); by `normalized` the page's own depth and the candidates' keyword scores (`scoreAlso`):
 * a keyword match's part is its score over the best one, so one past the page that is no
 * candidate never outranks the page's (`fused`).
 */
function fusedQuery(q: PendingMeaningQuery, sort: SearchSort, end: number, also: IndexQuery['also']): IndexQuery {
  if (q.fusion === 'normalized') return { ...indexQuery(q, sort, end, also), scoreAlso: true };
  return indexQuery(q, sort, end, also, Math.max(q.candidates, end));
}

/** `total` and facets of an index page. */
function counts(p: IndexPage): Omit<MeaningPage, 'hits'> {
  return { total: p.total, ...(p.facets && { facets: p.facets }) };
}

/** The hybrid page by relevance from the keyword search `fusedQuery` asked for (docs/api.md). */
function fused(q: PendingMeaningQuery, page: IndexPage, nearest: readonly ScoredId[], end: number): MeaningPage {
  const similarity = new Map(nearest.map((h) => [h.id, h.score]));
  const semantic = (page.kept ?? []).map((id) => ({ id, score: similarity.get(id)! }));
  if (q.fusion === 'normalized') {
    // Every keyword match keeps its score over the best: the page's keyword results and the
    // candidates that match hold every member that can rank before `end`.
    const keyword: ScoredId[] = page.hits.map((h) => ({ id: h.id, score: h.score }));
    const listed = new Set(keyword.map((h) => h.id));
    for (const [id, score] of page.keywordScores ?? []) if (!listed.has(id)) keyword.push({ id, score });
    const ranked = fuse(keyword, semantic, { ratio: q.ratio, method: 'normalized', keywordScale: 'best' });
    return { hits: ranked.slice(q.offset, end).map((h) => ({ id: h.id, score: h.score })), ...counts(page) };
  }
  const n = q.candidates;
  const keyword = page.hits.slice(0, n).map((h) => ({ id: h.id, score: h.score }));
  const ranked: ScoredId[] = fuse(keyword, semantic, { ratio: q.ratio, method: q.fusion });
  if (ranked.length < end) {
    const seen = new Set(ranked.map((h) => h.id));
    for (const h of page.hits.slice(n)) if (!seen.has(h.id)) ranked.push({ id: h.id, score: 0 });
  }
  return { hits: ranked.slice(q.offset, end).map((h) => ({ id: h.id, score: h.score })), ...counts(page) };
}

/** A page with the candidates in hand. */
async function pageOf(index: HybridCapableIndex, q: MeaningQuery, sort: SearchSort, end: number): Promise<MeaningPage> {
  const similarity = new Map(q.nearest.map((h) => [h.id, h.score]));
  const base = indexQuery(
    q,
    sort,
    end,
    q.nearest.map((h) => h.id),
  );
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
  const page = await index.search(fusedQuery(q, sort, end, base.also));
  return fused(q, page, q.nearest, end);
}
