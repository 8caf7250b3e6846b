import type { WeightedTerm } from '../index/cursor';
import type { Expansion, ExpansionLookup } from '../vocabulary/expansions';
import { MAX_SYNONYM_TERMS, SynonymTable } from './synonyms';

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

/**
 * The best `max` expansions: the closest first (smallest distance: what the user most likely
 * meant), then the most frequent (a common completion matches more of what the user is looking
 * for than a rare one at the same distance), then by term, so the choice is deterministic
 * whatever order the index yields candidates in.
 */
export function bestExpansions(candidates: Iterable<Expansion>, max: number): Expansion[] {
  if (max <= 0) return [];
  return [...candidates]
    .sort((a, b) => a.distance - b.distance || b.df - a.df || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, max);
}

/**
 * What one query scores, bounded by `QUERY_LIMITS` whatever its text: its distinct terms
 * weighted by how often they occur and, for a short query, the prefix and fuzzy expansions of
 * each.
 */
export interface QueryPlan {
  /** The query's terms (stopwords gone, stemmed), repeats kept, cut to the first `maxTerms` distinct ones. */
  readonly terms: string[];
  /** At most `shortQueryTerms` distinct terms: prefix and fuzzy matching instead of RM3. */
  readonly short: boolean;
  /** Weighted index terms of the first pass: distinct query terms, then their synonyms, then expansions. */
  readonly scored: WeightedTerm[];
  /** Per distinct query term, the index terms it stands for (itself first, then synonyms, then expansions); for coordination. */
  readonly groups: ReadonlyArray<readonly string[]>;
  /** The synonyms' index terms and weights (`SynonymTable`), also in `scored`; RM3's query model takes them too. */
  readonly synonyms: WeightedTerm[];
}

/** What `planQuery` reads of the ranking options (`RankingOptions`). */
export interface PlanOptions {
  /** Queries of at most this many distinct terms are short: prefix and fuzzy matching instead of RM3. */
  readonly shortQueryTerms: number;
  /** Shortest query term matched as a prefix. */
  readonly prefixMinLength: number;
  /** Shortest query term matched fuzzily. */
  readonly fuzzyMinLength: number;
}

/** Index terms near a query term, by prefix or near spelling (`CompactIndex.expansions`). */
export type ExpansionsOf = (term: string, lookup: ExpansionLookup) => Expansion[];

/**
 * The synonyms of a query's terms `kept` (in order, repeats kept): each index term once, its
 * weights summed over the places it comes from, at most `MAX_SYNONYM_TERMS`; a term the query
 * holds itself is searched as the query's. `of` gives, per distinct query term, the synonym
 * terms of the phrases that cover it (its coordination group).
 */
function synonymsOf(
  kept: readonly string[],
  own: ReadonlySet<string>,
  table: SynonymTable,
): { scored: WeightedTerm[]; of: Map<string, string[]> } {
  const weights = new Map<string, number>();
  const of = new Map<string, string[]>();
  for (const m of table.match(kept)) {
    for (const [t, w] of m.terms) {
      if (own.has(t) || (!weights.has(t) && weights.size >= MAX_SYNONYM_TERMS)) continue;
      weights.set(t, (weights.get(t) ?? 0) + w);
      for (const q of kept.slice(m.start, m.start + m.length)) {
        const group = of.get(q) ?? [];
        if (!group.includes(t)) group.push(t);
        of.set(q, group);
      }
    }
  }
  return { scored: [...weights], of };
}

/**
 * The terms a query of `queryTerms` (analysed: stopwords gone, stemmed) is scored with. A
 * repeated term is scored once with its count as weight; its synonyms (`synonyms`) are scored
 * beside it at their weights; a short query's terms also match index terms they are a prefix of
 * or a near spelling of (MiniSearch's prefix and fuzzy search, with its weights), the closest
 * first, capped per term and per query.
 */
export function planQuery(
  queryTerms: readonly string[],
  r: PlanOptions,
  expansions: ExpansionsOf,
  synonyms: SynonymTable = SynonymTable.EMPTY,
): QueryPlan {
  const L = QUERY_LIMITS;
  const { weighted, kept } = distinctTerms(queryTerms, L.maxTerms);
  const short = weighted.length > 0 && weighted.length <= r.shortQueryTerms;
  const syn = synonymsOf(kept, new Set(weighted.map(([t]) => t)), synonyms);
  const group = (t: string): string[] => [t, ...(syn.of.get(t) ?? [])];
  if (!short)
    return {
      terms: kept,
      short,
      scored: [...weighted, ...syn.scored],
      groups: weighted.map(([t]) => group(t)),
      synonyms: syn.scored,
    };
  const scored: WeightedTerm[] = [...weighted, ...syn.scored];
  const groups: string[][] = [];
  let budget: number = L.maxExpansions;
  for (const [term, count] of weighted) {
    const fuzzy =
      term.length >= r.fuzzyMinLength && term.length <= L.maxFuzzyLength
        ? Math.min(L.maxFuzzyDistance, Math.round(term.length * 0.2))
        : 0;
    const found = expansions(term, { prefix: term.length >= r.prefixMinLength, fuzzy, scanLimit: L.maxPrefixScan });
    const best = bestExpansions(found, Math.min(L.maxExpansionsPerTerm, budget));
    budget -= best.length;
    for (const e of best) scored.push([e.term, e.weight * count]);
    groups.push([...group(term), ...best.map((e) => e.term)]);
  }
  return { terms: kept, short, scored, groups, synonyms: syn.scored };
}
