import type { SearchIndex } from '../search/search-index';
import { yieldToLoop } from '../lib/yield-to-loop';
import { evaluateQuery, meanMetrics, type Judgments, type MeanMetrics, type QueryMetrics } from './relevance-measures';

/** One judged query of an evaluation. */
export interface EvalQuery {
  readonly query: string;
  /** id → grade (≥ 1 relevant); a plain list means grade 1 each. */
  readonly relevant: Judgments;
}

/** Per-query line of a report. */
export type QueryReport = QueryMetrics & {
  readonly query: string;
  /** The top ids as ranked (at most 10), to see what came back. */
  readonly top: readonly string[];
};

/** An evaluation run. */
export interface EvalReport {
  readonly k: number;
  readonly metrics: MeanMetrics;
  readonly per_query: readonly QueryReport[];
  readonly queries: number;
  readonly documents: number;
  readonly evaluated_at: string;
  readonly took_ms: number;
}

/** Ranks documents for a query, best first, to any depth. */
export type Ranker = (query: string, depth: number) => Promise<ReadonlyArray<{ id: string; score: number }>>;

/** A ranker over any index: its top `depth` hits, without snippets. */
export function indexRanker(index: SearchIndex): Ranker {
  return async (query, depth) => (await index.search({ text: query, limit: depth, offset: 0, snippets: false })).hits;
}

/**
 * Runs every query through `ranker` and scores the rankings at cutoff `k` (trec_eval
 * conventions). The loop is handed back after every query: a ranker may answer synchronously
 * (the embedded index does), and a thousand queries in a row would otherwise hold the process
 * (health probes included) for the whole run. Stops with the
 * signal's reason once `ctx.signal` is aborted (the client hung up).
 */
export async function evaluate(
  queries: readonly EvalQuery[],
  k: number,
  ranker: Ranker,
  ctx: { documents: number; now: number; signal?: AbortSignal },
): Promise<EvalReport> {
  const started = performance.now();
  const perQuery: QueryReport[] = [];
  for (const q of queries) {
    await yieldToLoop();
    ctx.signal?.throwIfAborted();
    const run = await ranker(q.query, k);
    const m = evaluateQuery(run, q.relevant, k);
    perQuery.push({ query: q.query, ...m, top: run.slice(0, 10).map((d) => d.id) });
  }
  return {
    k,
    metrics: meanMetrics(perQuery),
    per_query: perQuery,
    queries: queries.length,
    documents: ctx.documents,
    evaluated_at: new Date(ctx.now).toISOString(),
    took_ms: Math.round(performance.now() - started),
  };
}
