import express, { type Express } from 'express';
import { searchPageEnabled } from '../configs';
import type { AppDeps } from './deps';
import { errorHandler, notFoundHandler } from './http/errors';
import { metricsMiddleware } from './metrics/middleware';
import { isOperationalPath } from './metrics/request-types';
import { opsRouter } from './routes/ops';
import { searchPageRouter } from './web/search-page';
import { HTTP_ROUTES } from '../contract';

/** Express's `trust proxy` value for the `TRUST_PROXY` setting (0 = trust nothing). */
function trustProxyValue(v: number | readonly string[]): number | string[] | false {
  if (typeof v === 'number') return v === 0 ? false : v;
  return [...v];
}

/**
 * Builds the Express app without listening. Order: metrics (so every outcome is counted,
 * 404s and 429s included) → operational endpoints (exempt from limits) → rate limiter →
 * functional API → 404 → one JSON error handler. No body is read here: each route reads its
 * own, with a limit that fits it, after routing and (for writes) after auth, so a body sent
 * to an unknown path or without a token is answered, then discarded unparsed (http/drain.ts).
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxyValue(deps.settings.service.trustProxy));
  app.set('etag', false);
  // Where this app's HTTP contract is served (tests find the apps whose answers they prove by it).
  app.set('openapi', HTTP_ROUTES.openapi.path);
  // One layer for both: operational endpoints go to their router (never counted, never limited),
  // everything else is counted and goes on, so the functional path walks one layer, not two.
  const metrics = metricsMiddleware(deps.stats, deps.metrics);
  const ops = opsRouter(deps);
  app.use((req, res, next) => (isOperationalPath(req.path) ? ops(req, res, next) : metrics(req, res, next)));
  // The page's three static files are cheap and need no limit; the API calls it makes are limited.
  if (searchPageEnabled(deps.settings.service)) app.use(searchPageRouter());
  app.use(deps.rateLimiter.middleware);
  app.use(deps.features.router);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
