import type { Item, ItemType } from '../content/item';
import type { Analyzer } from './analysis/analyzer';

/** One search as the index sees it (already validated). */
export interface IndexQuery {
  /** The user's words. */
  readonly text: string;
  readonly type?: ItemType;
  /** Only items carrying this tag (case-insensitive). */
  readonly tag?: string;
  /** Hits to return. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
  /** Whether to build snippets. @default true */
  readonly snippets?: boolean;
}

/** One ranked item. */
export interface IndexHit {
  readonly id: string;
  readonly score: number;
  /** Plain text around the best-matching passage; matched words wrapped in `<mark>`, the rest HTML-escaped. */
  readonly snippet: string;
}

/** A page of ranked hits and the number of all matches. */
export interface IndexPage {
  readonly total: number;
  readonly hits: readonly IndexHit[];
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
  /** Ranked hits, best first; ties broken by id (ascending), so pages are stable. */
  search(query: IndexQuery): Promise<IndexPage>;
  /** Items indexed. */
  size(): number;
  /**
   * The index terms of the synonyms a query for `text` also searches (beside its own terms);
   * chat picks passages with both. @default none
   */
  synonymTerms?(text: string): string[];
}
