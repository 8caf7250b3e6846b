import type { Vocabulary } from './vocabulary';

// MiniSearch's default search weights of prefix and fuzzy matches (`SearchOptions.weights`).
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;

/**
 * Query terms whose expansions `CompactIndex.expansions` keeps between writes (the oldest go
 * first): a query's prefix and fuzzy look-ups were a fifth of a 2-word query's time at 200k
 * documents (in MiniSearch's radix tree), and the same words recur.
 */
const EXPANSION_CACHE_TERMS = 4096;

/** How `CompactIndex.expansions` looks for index terms near a query term. */
export interface ExpansionLookup {
  /** Match index terms that start with the query term. */
  readonly prefix: boolean;
  /** Largest edit distance of a near spelling; 0 = none. */
  readonly fuzzy: number;
  /** Prefix matches looked at, at most. */
  readonly scanLimit: number;
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

/** What `ExpansionCache` looks terms up in: the vocabulary and each term's largest document frequency. */
export interface ExpansionSource {
  readonly vocabulary: Vocabulary;
  readonly terms: readonly string[];
  /** Largest document frequency of term id `t` over the fields (0: no live document holds it). */
  maxDf(t: number): number;
}

/** The expansions of query terms, kept for one index version (`CompactIndex.expansions`). */
export class ExpansionCache {
  private readonly cache = new Map<string, Expansion[]>();
  private version = -1;

  /** Forgets every expansion (benchmarks). */
  clear(): void {
    this.cache.clear();
  }

  /**
   * Index terms that `term` is a prefix of (at most `scanLimit` looked at) or within `fuzzy`
   * edits of, weighted as MiniSearch's own prefix and fuzzy search weights them (a term found
   * both ways counts as a prefix match); the term itself is left out, and so are terms no live
   * document holds.
   */
  expansions(term: string, lookup: ExpansionLookup, version: number, source: () => ExpansionSource): Expansion[] {
    if (this.version !== version) {
      this.cache.clear();
      this.version = version;
    }
    const key = `${lookup.prefix ? 1 : 0}:${lookup.fuzzy}:${lookup.scanLimit}:${term}`;
    let found = this.cache.get(key);
    if (!found) {
      found = lookUpExpansions(term, lookup, source());
      if (this.cache.size >= EXPANSION_CACHE_TERMS) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, found);
    }
    return found.slice();
  }
}

/**
 * `expansions` looked up in the vocabulary: prefix matches (all of them when the prefix has at
 * most `scanLimit` terms; past that, the first `scanLimit` in the radix tree's order, as
 * MiniSearch's tree gave them) and near spellings.
 */
function lookUpExpansions(term: string, lookup: ExpansionLookup, source: ExpansionSource): Expansion[] {
  const out = new Map<string, Expansion>();
  const { terms, vocabulary } = source;
  if (lookup.prefix) {
    vocabulary.prefixed(term, lookup.scanLimit, (id) => {
      const df = source.maxDf(id);
      if (df === 0) return false;
      const t = terms[id];
      const distance = t.length - term.length;
      if (distance > 0)
        out.set(t, { term: t, weight: (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), distance, df });
      return true;
    });
  }
  if (lookup.fuzzy > 0) {
    vocabulary.near(term, lookup.fuzzy, (id, distance) => {
      const t = terms[id];
      const df = source.maxDf(id);
      if (df > 0 && distance > 0 && !out.has(t))
        out.set(t, { term: t, weight: (FUZZY_WEIGHT * t.length) / (t.length + distance), distance, df });
    });
  }
  return [...out.values()];
}
