import { DEFAULT_SEARCH, type SearchSettings } from '../../configs';
import type { ExpansionOptions } from './query/expansion';
import type { ProximityOptions } from './scoring/proximity';

/**
 * Indexed fields: `text` is everything (title, summary, tags and body) and carries plain BM25;
 * `title` and `tags` add a bonus on top. (MiniSearch scores fields separately and sums them, so
 * splitting the title from the body would saturate a term's weight once per field, which
 * measurably hurts: see BENCHMARKS.md.)
 */
export type IndexedField = 'title' | 'tags' | 'text';

/**
 * How documents are ranked. Defaults are tuned on the Vaswani collection (see BENCHMARKS.md).
 * The one source of every default: what settings control comes from the settings module
 * (`DEFAULT_SEARCH`, `SEARCH_*`), the rest is `RANKING_CONSTANTS`; `rankingOptions` joins them.
 */
export interface RankingOptions {
  /** BM25 term-frequency saturation (k1), length normalisation (b) and BM25+ floor (δ). */
  readonly bm25: { readonly k1: number; readonly b: number; readonly delta: number };
  /** Score multiplier per field (scores are summed over fields); 0 leaves a field out of the search. */
  readonly boost: Readonly<Record<IndexedField, number>>;
  /**
   * Multiply a document's score by the number of query terms it matches (MiniSearch's own
   * behaviour; a coordination factor). Off = plain BM25 sums.
   */
  readonly coordination: boolean;
  /** Queries of at most this many terms also match prefixes and near spellings. */
  readonly shortQueryTerms: number;
  /** Shortest term matched as a prefix. */
  readonly prefixMinLength: number;
  /**
   * Shortest term matched fuzzily; the edit distance is 20% of its length, at most
   * `QUERY_LIMITS.maxFuzzyDistance`, and terms longer than `QUERY_LIMITS.maxFuzzyLength` are not.
   */
  readonly fuzzyMinLength: number;
  /** RM3 pseudo-relevance feedback (query expansion), for queries longer than `shortQueryTerms`. */
  readonly expansion: ExpansionOptions;
  /** Proximity of the query's adjacent terms (`proximity.ts`), for queries longer than `shortQueryTerms`; weight 0 = off. */
  readonly proximity: ProximityOptions;
}

/** The ranking options no setting controls (constants tuned on Vaswani: BENCHMARKS.md). */
export const RANKING_CONSTANTS = {
  boost: { title: 0.2, tags: 0.5, text: 1 },
  coordination: false,
  shortQueryTerms: 2,
  prefixMinLength: 3,
  fuzzyMinLength: 5,
  expansion: { originalWeight: 0.5, minDocs: 50 },
  // The top 10 of the final ranking are re-scored by proximity: a page of 10 then costs no deeper
  // top-k pass (the top 100, the sweep's depth, made full queries 1.5-1.8x slower at 200k for
  // +0.0003 nDCG@10 on Vaswani and +0.0005 on Debian: BENCHMARKS.md, issue 28, sixth slice).
  proximity: { depth: 10 },
} as const satisfies Omit<RankingOptions, 'bm25' | 'expansion' | 'proximity'> & {
  expansion: Pick<ExpansionOptions, 'originalWeight' | 'minDocs'>;
  proximity: Pick<ProximityOptions, 'depth'>;
};

/**
 * The ranking of `search` settings (`SEARCH_BM25_*` with BM25+'s δ, `SEARCH_QUERY_EXPANSION`,
 * `SEARCH_EXPANSION_*`, `SEARCH_PROXIMITY_*`) with `RANKING_CONSTANTS`.
 */
export function rankingOptions(search: SearchSettings): RankingOptions {
  const { expansion, proximity, ...rest } = RANKING_CONSTANTS;
  return {
    ...rest,
    bm25: { k1: search.bm25K1, b: search.bm25B, delta: search.bm25Delta },
    expansion: {
      enabled: search.queryExpansion,
      fbDocs: search.expansionDocs,
      fbTerms: search.expansionTerms,
      ...expansion,
    },
    proximity: { weight: search.proximityWeight, window: search.proximityWindow, ...proximity },
  };
}

/** The ranking the service uses with default settings. */
export const DEFAULT_RANKING: RankingOptions = rankingOptions(DEFAULT_SEARCH);
