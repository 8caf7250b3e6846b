/** A ranked document of a run. */
export interface RankedDoc {
  readonly id: string;
  readonly score: number;
}

/** Relevance judgments of one query: id → grade; grade ≥ 1 is relevant, 0 judged not relevant. */
export type Judgments = ReadonlyMap<string, number>;

/** Measures of one query at cutoff k. */
export interface QueryMetrics {
  /** nDCG@k with linear gain (gain = grade) and log2(rank + 1) discount. */
  readonly ndcg: number;
  /** Reciprocal rank of the first relevant document within the top k (0 if none). */
  readonly mrr: number;
  /** Relevant documents in the top k / all relevant documents. */
  readonly recall: number;
  /** Relevant documents in the top k / k (P@k: divided by k even when fewer were retrieved). */
  readonly precision: number;
  /** Average precision over the top k: Σ precision at each relevant rank / all relevant documents. */
  readonly map: number;
  /** Documents judged relevant. */
  readonly num_rel: number;
  /** Documents retrieved within the cutoff. */
  readonly num_ret: number;
  /** Relevant documents retrieved within the cutoff. */
  readonly num_rel_ret: number;
}

/** Mean measures over queries. */
export interface MeanMetrics {
  readonly ndcg: number;
  readonly mrr: number;
  readonly recall: number;
  readonly precision: number;
  readonly map: number;
}

/**
 * The order trec_eval evaluates a run in: score descending, ties by document id descending
 * (trec_eval's docno comparison), duplicates after the first dropped. Deterministic whatever
 * order the run came in.
 */
export function trecOrder(run: readonly RankedDoc[]): RankedDoc[] {
  const seen = new Set<string>();
  const unique = run.filter((d) => (seen.has(d.id) ? false : (seen.add(d.id), true)));
  return unique.sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/**
 * trec_eval's measures for one query at cutoff `k` (`P_k`, `recall_k`, `ndcg_cut_k`, `map_cut_k`,
 * `recip_rank` limited to k). A query with no relevant documents scores 0 on every measure.
 */
export function evaluateQuery(run: readonly RankedDoc[], judgments: Judgments, k: number): QueryMetrics {
  const ranked = trecOrder(run).slice(0, k);
  const grades = [...judgments.values()].map((g) => Math.max(0, g));
  const numRel = grades.filter((g) => g >= 1).length;
  let relRet = 0;
  let apSum = 0;
  let rr = 0;
  let dcg = 0;
  ranked.forEach((d, i) => {
    const grade = Math.max(0, judgments.get(d.id) ?? 0);
    if (grade >= 1) {
      relRet += 1;
      apSum += relRet / (i + 1);
      if (!rr) rr = 1 / (i + 1);
    }
    if (grade > 0) dcg += grade / Math.log2(i + 2);
  });
  const ideal = grades
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return {
    ndcg: idcg > 0 ? dcg / idcg : 0,
    mrr: rr,
    recall: numRel ? relRet / numRel : 0,
    precision: relRet / k,
    map: numRel ? apSum / numRel : 0,
    num_rel: numRel,
    num_ret: ranked.length,
    num_rel_ret: relRet,
  };
}

/** Arithmetic mean of each measure over every judged query (0 when there are none). */
export function meanMetrics(perQuery: readonly QueryMetrics[]): MeanMetrics {
  const n = perQuery.length;
  const mean = (f: (m: QueryMetrics) => number) => (n ? perQuery.reduce((s, m) => s + f(m), 0) / n : 0);
  return {
    ndcg: mean((m) => m.ndcg),
    mrr: mean((m) => m.mrr),
    recall: mean((m) => m.recall),
    precision: mean((m) => m.precision),
    map: mean((m) => m.map),
  };
}
