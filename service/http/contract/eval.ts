import { z } from 'zod';

/** Most queries in one evaluation. */
export const MAX_EVAL_QUERIES = 1000;
/** Deepest cutoff. */
export const MAX_EVAL_K = 1000;

const judgments = z.union(
  [
    z
      .array(z.string().min(1), { error: 'relevant must be a list of ids or an object of id: grade' })
      .min(1, { error: 'relevant must not be empty' }),
    z.record(
      z.string().min(1),
      z.number({ error: 'grades must be numbers' }).int({ error: 'grades must be integers' }).min(0).max(100),
    ),
  ],
  { error: 'relevant must be a list of ids or an object {id: grade}' },
);

/** `POST /api/eval` `{queries: [{query, relevant}], k?}`. */
export const evalRequest = z
  .object({
    queries: z
      .array(
        z.object({
          query: z
            .string({ error: 'query must be a string' })
            .trim()
            .min(1, { error: 'query must not be empty' })
            .max(500, { error: 'query is longer than 500 characters' }),
          relevant: judgments,
        }),
        { error: 'queries is required: [{query, relevant}]' },
      )
      .min(1, { error: 'queries must hold at least one query' })
      .max(MAX_EVAL_QUERIES, { error: `at most ${MAX_EVAL_QUERIES} queries` }),
    k: z
      .number({ error: 'k must be a number' })
      .int({ error: 'k must be an integer' })
      .min(1)
      .max(MAX_EVAL_K)
      .optional(),
  })
  .meta({ id: 'EvalRequest', example: { queries: [{ query: 'rate limit', relevant: ['rate-limiting'] }], k: 10 } });

const measures = { ndcg: z.number(), mrr: z.number(), recall: z.number(), precision: z.number(), map: z.number() };

/** An evaluation run: trec_eval's measures at cutoff k, mean and per query. */
export const evalReportSchema = z
  .object({
    k: z.int(),
    metrics: z.object(measures),
    per_query: z.array(z.looseObject({ ...measures, query: z.string(), top: z.array(z.string()) })),
    queries: z.int(),
    documents: z.int(),
    evaluated_at: z.iso.datetime(),
    took_ms: z.number(),
  })
  .meta({ id: 'EvalReport' });
