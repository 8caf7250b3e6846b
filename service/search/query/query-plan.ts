/** One query term and its weight (RM3 weight, or 1; a term given twice counts twice). */
export type WeightedTerm = readonly [term: string, weight: number];

/**
 * Bounds on the work of one query, whatever its text: the cost of a search grows with the
 * distinct terms it scores, and prefix and fuzzy matching turn one term into many. Constants,
 * not settings: they bound CPU per request, they do not tune ranking.
 */
export const QUERY_LIMITS = {
  /** Distinct terms of a query that are searched; later ones are ignored. */
  maxTerms: 32,
  /** Index terms one query term may expand to by prefix or near spelling (the term itself not counted). */
  maxExpansionsPerTerm: 16,
  /** Index terms a whole query may expand to. */
  maxExpansions: 32,
  /** Prefix matches looked at per query term before the best are picked (the vocabulary under a short prefix is unbounded). */
  maxPrefixScan: 2_000,
  /** Longest term (after stemming) matched fuzzily: fuzzy lookup cost grows steeply with length and distance. */
  maxFuzzyLength: 20,
  /** Largest edit distance of a fuzzy match. */
  maxFuzzyDistance: 2,
} as const;

/** Query terms reduced to the distinct ones, each weighted by its number of occurrences. */
export interface DistinctTerms {
  /** Distinct terms in order of first occurrence with their counts, at most `max`. */
  readonly weighted: WeightedTerm[];
  /** The query's terms (repeats kept) restricted to the kept distinct ones. */
  readonly kept: string[];
}

/**
 * Deduplicates query terms: a term given n times is scored once with weight n (BM25 query-term
 * frequency, so ranking is unchanged) instead of n times, and only the first `max` distinct terms
 * count. Repeating a word costs nothing more than writing it once.
 */
export function distinctTerms(terms: readonly string[], max: number = QUERY_LIMITS.maxTerms): DistinctTerms {
  const counts = new Map<string, number>();
  const kept: string[] = [];
  for (const t of terms) {
    const n = counts.get(t);
    if (n === undefined && counts.size >= max) continue;
    counts.set(t, (n ?? 0) + 1);
    kept.push(t);
  }
  return { weighted: [...counts], kept };
}

/** An index term reached from a query term by prefix or near spelling. */
export interface Expansion {
  readonly term: string;
  /** MiniSearch's weight of the match (prefix or fuzzy weight, lowered with distance); always below an exact match's 1. */
  readonly weight: number;
  /** Letters added (prefix match) or edits (near spelling) between the query term and this one. */
  readonly distance: number;
  /** Documents holding the term (in its most common field). */
  readonly df: number;
}

/**
 * The best `max` expansions: the closest first (smallest distance: what the user most likely
 * meant), then the most frequent (a common completion matches more of what the user is looking
 * for than a rare one at the same distance), then by term, so the choice is deterministic
 * whatever order the index yields candidates in.
 */
export function bestExpansions(candidates: Iterable<Expansion>, max: number): Expansion[] {
  if (max <= 0) return [];
  return [...candidates].sort((a, b) => a.distance - b.distance || b.df - a.df || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0)).slice(0, max);
}
