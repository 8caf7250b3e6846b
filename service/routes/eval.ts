import { Router } from 'express';
import { z } from 'zod';
import { evaluate, indexRanker, type EvalReport } from '../eval/evaluator';
import { HttpError } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { jsonObject } from '../http/json-object';
import type { FeatureContext } from './context';

/** Most queries in one evaluation. */
export const MAX_EVAL_QUERIES = 1000;
/** Deepest cutoff. */
export const MAX_EVAL_K = 1000;
/** Largest `POST /api/eval` body, bytes (capped by `MAX_BODY_SIZE`): `MAX_EVAL_QUERIES` queries with their judgments. */
export const EVAL_BODY_BYTES = 2 * 1024 * 1024;

const judgments = z.union(
  [
    z.array(z.string().min(1), { error: 'relevant must be a list of ids or an object of id: grade' }).min(1, { error: 'relevant must not be empty' }),
    z.record(z.string().min(1), z.number({ error: 'grades must be numbers' }).int({ error: 'grades must be integers' }).min(0).max(100)),
  ],
  { error: 'relevant must be a list of ids or an object {id: grade}' },
);

const evalSchema = z.object({
  queries: z
    .array(
      z.object({
        query: z.string({ error: 'query must be a string' }).trim().min(1, { error: 'query must not be empty' }).max(500, { error: 'query is longer than 500 characters' }),
        relevant: judgments,
      }),
      { error: 'queries is required: [{query, relevant}]' },
    )
    .min(1, { error: 'queries must hold at least one query' })
    .max(MAX_EVAL_QUERIES, { error: `at most ${MAX_EVAL_QUERIES} queries` }),
  k: z.number({ error: 'k must be a number' }).int({ error: 'k must be an integer' }).min(1).max(MAX_EVAL_K).optional(),
});

/**
 * `POST /api/eval` `{queries: [{query, relevant}], k?}` scores the live index with trec_eval's
 * measures at cutoff k (default 10); `GET /api/eval` returns the last report of this replica
 * (404 before the first).
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function evalRouter(ctx: FeatureContext, r: Router = Router()): Router {
  let last: EvalReport | undefined;
  r.post('/api/eval', jsonBody(Math.min(EVAL_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)), async (req, res) => {
    const parsed = evalSchema.safeParse(jsonObject(req, '{"queries": [{"query": "words", "relevant": ["some-id"]}], "k": 10}'));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.map(String).join('.');
      throw new HttpError(400, 'bad_request', `${field ? `${field}: ` : ''}${issue.message}`, { field });
    }
    const { queries, k = 10 } = parsed.data;
    const judged = queries.map((q) => ({
      query: q.query,
      relevant: new Map(Array.isArray(q.relevant) ? q.relevant.map((id) => [id, 1] as const) : Object.entries(q.relevant)),
    }));
    // A client that hangs up stops the run: its remaining queries would be work for nobody.
    const hangUp = new AbortController();
    res.on('close', () => res.writableFinished || hangUp.abort());
    try {
      last = await evaluate(judged, k, indexRanker(ctx.search.index), { documents: ctx.content.size, now: ctx.deps.clock.now(), signal: hangUp.signal });
    } catch (e) {
      if (hangUp.signal.aborted) return;
      throw e;
    }
    res.json(last);
  });
  r.get('/api/eval', (_req, res) => {
    if (!last) throw new HttpError(404, 'not_found', 'no evaluation has run yet on this replica: POST /api/eval first');
    res.json(last);
  });
  return r;
}
