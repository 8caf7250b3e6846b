import type { Item } from '../content/item';
import type { FacetName, ItemFilter } from '../content/item-filter';
import type { Analyzer } from './analysis/analyzer';
import type { SearchSort } from '../http/contract/search';
import type { FacetCounts } from './browse';

/** One search as the index sees it (already validated). */
export interface IndexQuery {
  /** The user's words; empty (only spaces): every item the filter keeps (a placeholder search). */
  readonly text: string;
  /** Only the items it keeps (`matches`). */
  readonly filter?: ItemFilter;
  /** @default 'relevance' with words, 'date:desc' without (where relevance means the same) */
  readonly sort?: SearchSort;
  /** Facets to count over every match (disjunctive: each without its own part of the filter). */
  readonly facets?: readonly FacetName[];
  /** Most tags in the tag facet. @default 20 */
  readonly facetLimit?: number;
  /** Hits to return. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
  /** Whether to build snippets. @default true */
  readonly snippets?: boolean;
  /**
   * Ids that belong to the result set besides the keyword matches (hybrid search's semantic
   * candidates, issue 41): each indexed one that the filter keeps and no scored term of the query
   * matches is counted in `total` and in the facets, and listed in `IndexPage.extra`. A search
   * without words matches every item already. May be a promise (the semantic candidates of a
   * vector search running meanwhile): the index reads it only after its passes over the
   * postings, so both run at once. @default none
   */
  readonly also?: readonly string[] | PromiseLike<readonly string[]>;
  /** False: no keyword matches, the result set is `also`'s ids the filter keeps (semantic search). @default true */
  readonly keyword?: boolean;
  /**
   * With `also`, by relevance: `IndexPage.keywordScores` gives the keyword score of each of its
   * kept ids that is a keyword match, wherever it ranks (hybrid search's normalized fusion, which
   * then needs no deeper page than its own). @default false
   */
  readonly scoreAlso?: boolean;
}

/** One ranked item. */
export interface IndexHit {
  readonly id: string;
  readonly score: number;
  /** Plain text around the best-matching passage; matched words wrapped in `<mark>`, the rest HTML-escaped. */
  readonly snippet: string;
}

/** A page of ranked hits, the number of all matches and the facets asked for. */
export interface IndexPage {
  readonly total: number;
  readonly hits: readonly IndexHit[];
  /** Present when `IndexQuery.facets` asked for some. */
  readonly facets?: FacetCounts;
  /** With `IndexQuery.also`: those of its ids the filter keeps that are no keyword match, in its order (counted in `total`). */
  readonly extra?: readonly string[];
  /** With `IndexQuery.also`: those of its ids the filter keeps, keyword matches or not, in its order. */
  readonly kept?: readonly string[];
  /** With `IndexQuery.scoreAlso`: the keyword score of each of `kept`'s ids that is a keyword match, as its ranking gives it. */
  readonly keywordScores?: ReadonlyMap<string, number>;
}

/**
 * A full-text index of items. The embedded implementation is `EmbeddedIndex`; a distributed
 * engine (OpenSearch, Elasticsearch) can implement the same contract for users who outgrow one
 * node, which is why every method may be asynchronous.
 */
export interface SearchIndex {
  /** Engine name, for logs and health. */
  readonly engine: string;
  /**
   * How the index turns text into terms. Chat picks passages and extractive answers with it, so
   * they match what the search matched; an external engine supplies the nearest equivalent.
   */
  readonly analyzer: Analyzer;
  /** Adds or replaces items by id. */
  upsert(items: readonly Item[]): Promise<void>;
  /** Removes items by id; unknown ids are ignored. */
  remove(ids: readonly string[]): Promise<void>;
  /** Replaces the whole content. */
  replaceAll(items: readonly Item[]): Promise<void>;
  /** Hits in the query's order (best first by default); ties broken by id (ascending), so pages are stable. */
  search(query: IndexQuery): Promise<IndexPage>;
  /** Items indexed. */
  size(): number;
  /**
   * The index terms of the synonyms a query for `text` also searches (beside its own terms);
   * chat picks passages with both. @default none
   */
  synonymTerms?(text: string): string[];
  /** The snippet of an item for a query's words (search by meaning's pages, issue 41). @default none */
  snippetOf?(id: string, text: string): string;
  /** `snippetOf` of each id, the query's words analysed once (a page of search by meaning). @default none */
  snippetsOf?(ids: readonly string[], text: string): string[];
  /** Ids in a sort's order (not relevance), ties by id (search by meaning's pages). @default none */
  sorted?(ids: readonly string[], sort: Exclude<SearchSort, 'relevance'>): Promise<string[]>;
}
