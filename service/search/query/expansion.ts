/** Options of RM3 pseudo-relevance feedback. */
export interface ExpansionOptions {
  /** Apply it at all. */
  readonly enabled: boolean;
  /** Top documents of the first ranking taken as relevant. */
  readonly fbDocs: number;
  /** Expansion terms kept. */
  readonly fbTerms: number;
  /** Weight of the original query in the mix (λ); the feedback model gets 1 − λ. */
  readonly originalWeight: number;
  /** Skip expansion on indexes smaller than this: feedback from a handful of documents is noise. */
  readonly minDocs: number;
}

/** A document's analyzed terms: term frequencies and length. */
export interface TermVector {
  readonly tf: ReadonlyMap<string, number>;
  readonly length: number;
}

/**
 * RM3 (Lavrenko & Croft's relevance model, interpolated with the query as in Anserini):
 *
 *   P(w|R) ∝ Σ_d  s(d)/Σs · tf(w,d)/|d|        over the top `fbDocs` documents d
 *   weight(w) = λ·P(w|Q) + (1−λ)·P(w|R)         with P(w|R) cut to the top `fbTerms` terms
 *
 * where s(d) is the first-pass score and P(w|Q) the query's own term distribution; `synonyms`
 * (the plan's, each weighted against one occurrence of a query term) join P(w|Q) at their weight
 * over the query's length, so they keep their share of the query. Returns the weighted terms
 * (original ones included), best first; ties by term, so it is deterministic.
 */
export function rm3Weights(
  queryTerms: readonly string[],
  feedback: ReadonlyArray<{ score: number; vector: TermVector }>,
  opts: Pick<ExpansionOptions, 'fbTerms' | 'originalWeight'>,
  synonyms: ReadonlyArray<readonly [string, number]> = [],
): Map<string, number> {
  const out = new Map<string, number>();
  const q = new Map<string, number>();
  for (const t of queryTerms) q.set(t, (q.get(t) ?? 0) + 1 / queryTerms.length);
  for (const [t, w] of synonyms) q.set(t, (q.get(t) ?? 0) + w / queryTerms.length);
  const total = feedback.reduce((s, f) => s + Math.max(0, f.score), 0);
  const rel = new Map<string, number>();
  if (total > 0) {
    for (const { score, vector } of feedback) {
      if (score <= 0 || vector.length === 0) continue;
      const dw = score / total;
      for (const [term, tf] of vector.tf) rel.set(term, (rel.get(term) ?? 0) + (dw * tf) / vector.length);
    }
  }
  const top = [...rel.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, opts.fbTerms);
  const relSum = top.reduce((s, [, w]) => s + w, 0);
  const lambda = relSum > 0 ? opts.originalWeight : 1;
  for (const [t, w] of q) out.set(t, lambda * w);
  for (const [t, w] of top) out.set(t, (out.get(t) ?? 0) + (1 - lambda) * (w / relSum));
  return new Map([...out.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
}
