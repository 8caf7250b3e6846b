import { Router } from 'express';
import { evaluate, indexRanker, type EvalReport } from '../eval/evaluator';
import { evalRequest } from '../http/contract/eval';
import { validate } from '../http/contract/validate';
import { HttpError } from '../http/errors';
import { jsonBody } from '../http/json-body';
import { jsonObject } from '../http/json-object';
import type { FeatureContext } from './context';
import { HTTP_ROUTES } from '../../contract';

export { MAX_EVAL_K, MAX_EVAL_QUERIES } from '../http/contract/eval';
/** Largest `POST /api/eval` body, bytes (capped by `MAX_BODY_SIZE`): `MAX_EVAL_QUERIES` queries with their judgments. */
export const EVAL_BODY_BYTES = 2 * 1024 * 1024;

/**
 * `POST /api/eval` `{queries: [{query, relevant}], k?}` scores the live index with trec_eval's
 * measures at cutoff k (default 10); `GET /api/eval` returns the last report of this replica
 * (404 before the first).
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function evalRouter(ctx: FeatureContext, r: Router = Router()): Router {
  let last: EvalReport | undefined;
  r.post(
    HTTP_ROUTES.evaluate.path,
    jsonBody(Math.min(EVAL_BODY_BYTES, ctx.deps.settings.service.maxBodyBytes)),
    async (req, res) => {
      const { queries, k = 10 } = validate(
        evalRequest,
        jsonObject(req, '{"queries": [{"query": "words", "relevant": ["some-id"]}], "k": 10}'),
      );
      const judged = queries.map((q) => ({
        query: q.query,
        relevant: new Map(
          Array.isArray(q.relevant) ? q.relevant.map((id) => [id, 1] as const) : Object.entries(q.relevant),
        ),
      }));
      // A client that hangs up stops the run: its remaining queries would be work for nobody.
      const hangUp = new AbortController();
      res.on('close', () => res.writableFinished || hangUp.abort());
      try {
        last = await evaluate(judged, k, indexRanker(ctx.search.index), {
          documents: ctx.content.size,
          now: ctx.deps.clock.now(),
          signal: hangUp.signal,
        });
      } catch (e) {
        if (hangUp.signal.aborted) return;
        throw e;
      }
      res.json(last);
    },
  );
  r.get(HTTP_ROUTES.lastEvaluation.path, (_req, res) => {
    if (!last)
      throw new HttpError(
        404,
        'not_found',
        `no evaluation has run yet on this replica: ${HTTP_ROUTES.evaluate.method} ${HTTP_ROUTES.evaluate.path} first`,
      );
    res.json(last);
  });
  return r;
}
