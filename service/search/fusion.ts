/**
 * Hybrid ranking's fusion (issue 41): one ranking from a keyword list and a semantic list.
 * Pure: no index, no settings; the search service and the quality bench both call `fuse`.
 */

/** One candidate of one list: an item's id and its score in that list (higher is better). */
export interface ScoredId {
  readonly id: string;
  readonly score: number;
}

/**
 * How two lists become one. `rrf`: reciprocal rank fusion (Cormack et al. 2009), each list
 * contributing `weight / (k + rank)`, so only ranks matter and BM25's unbounded scores need no
 * calibration against cosine similarities. `normalized`: each list's scores mapped to 0..1 by
 * min-max, then a convex combination (OpenSearch's min-max, Weaviate's relative score fusion).
 */
export type FusionMethod = 'rrf' | 'normalized';

/** The fusion methods, in the order settings and docs list them. */
export const FUSION_METHODS: readonly FusionMethod[] = ['rrf', 'normalized'];

/** The reciprocal rank constant of Cormack et al. (2009), the one every engine ships. */
export const RRF_K = 60;

/** Options of one `fuse` call. */
export interface FusionOptions {
  /** Weight of the semantic list, 0..1 (`semantic_ratio`); the keyword list weighs `1 - ratio`. */
  readonly ratio: number;
  /** How the lists are combined. */
  readonly method: FusionMethod;
  /** RRF's rank constant. @default 60 (`RRF_K`) */
  readonly k?: number;
  /**
   * `normalized` only: how the keyword list's scores are scaled. `min-max` like the semantic
   * list's; `best`: divided by the list's best score (BM25's scores are positive: 0 stays 0), so
   * an item's keyword part does not depend on how deep the list goes, and equal fused scores are
   * ordered by keyword score (best first) before id, so keyword matches of equal fused score keep
   * the keyword order (the hybrid page's, docs/api.md). @default 'min-max'
   */
  readonly keywordScale?: 'min-max' | 'best';
}

/** One fused result: its fused score and where it stood in each list. */
export interface FusedId {
  readonly id: string;
  /** The fused score (higher is better); comparable only within one `fuse` answer. */
  readonly score: number;
  /** Its 1-based rank in the keyword list, absent when the list does not hold it. */
  readonly keywordRank?: number;
  /** Its 1-based rank in the semantic list, absent when the list does not hold it. */
  readonly semanticRank?: number;
}

/**
 * Fuses a keyword and a semantic list into one ranking: every id of either list once, best fused
 * score first, equal scores by id (code-unit order), so the answer is the same whatever the
 * lists' order. Each list is ranked by its own score (best first, ties by id); an id listed twice
 * in one list counts at its best score. An id absent from a list gets nothing from it (RRF) or 0
 * (normalized: the list's minimum maps to 0 too). With one distinct score in a list, every id of
 * it normalises to 1. Throws RangeError for a ratio outside 0..1, a k that is not a positive
 * finite number, or a score that is not finite.
 */
export function fuse(keyword: readonly ScoredId[], semantic: readonly ScoredId[], opts: FusionOptions): FusedId[] {
  const { ratio, method } = opts;
  const k = opts.k ?? RRF_K;
  if (!(ratio >= 0 && ratio <= 1)) throw new RangeError(`fusion ratio must be within 0..1, got ${ratio}`);
  if (!(k > 0 && Number.isFinite(k))) throw new RangeError(`fusion k must be a positive number, got ${k}`);
  const kw = ranked(keyword, 'keyword');
  const sem = ranked(semantic, 'semantic');
  const best = method === 'normalized' && opts.keywordScale === 'best';
  const kwPart = part(kw, 1 - ratio, method, k, best);
  const semPart = part(sem, ratio, method, k);
  const out: FusedId[] = [];
  const ids = new Set<string>([...kw.keys(), ...sem.keys()]);
  for (const id of ids) {
    const a = kw.get(id);
    const b = sem.get(id);
    out.push({
      id,
      score: (a ? kwPart(a) : 0) + (b ? semPart(b) : 0),
      ...(a && { keywordRank: a.rank }),
      ...(b && { semanticRank: b.rank }),
    });
  }
  if (!best) return out.sort(byScoreThenId);
  const kwScore = (f: FusedId) => (f.keywordRank === undefined ? -Infinity : kw.get(f.id)!.score);
  return out.sort((a, b) => b.score - a.score || kwScore(b) - kwScore(a) || byScoreThenId(a, b));
}

interface Ranked {
  readonly rank: number;
  readonly score: number;
}

/** Best score first, equal scores by id. */
function byScoreThenId(a: ScoredId, b: ScoredId): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Each id's best score and its 1-based rank in the list. */
function ranked(list: readonly ScoredId[], name: string): Map<string, Ranked> {
  for (const s of list) {
    if (!Number.isFinite(s.score)) throw new RangeError(`${name} score of ${s.id} is not finite: ${s.score}`);
  }
  const out = new Map<string, Ranked>();
  for (const s of [...list].sort(byScoreThenId)) {
    if (!out.has(s.id)) out.set(s.id, { rank: out.size + 1, score: s.score });
  }
  return out;
}

/** What one list adds to an id's fused score; `best`: scaled by the list's best score alone (min 0). */
function part(
  list: Map<string, Ranked>,
  weight: number,
  method: FusionMethod,
  k: number,
  best = false,
): (r: Ranked) => number {
  if (method === 'rrf') return (r) => weight / (k + r.rank);
  let min = best ? 0 : Infinity;
  let max = -Infinity;
  for (const r of list.values()) {
    if (!best) min = Math.min(min, r.score);
    max = Math.max(max, r.score);
  }
  const span = max - min;
  return (r) => weight * (span > 0 ? (r.score - min) / span : 1);
}
