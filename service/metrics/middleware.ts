import type { RequestHandler, Response } from 'express';
import { API_ROUTE_TABLE, isOperationalPath, requestTypeOf, type RouteTable } from './request-types';
import type { RequestStats } from './request-stats';
import type { ServiceMetrics } from './service-metrics';

/** `status_class` label of the histogram (`2xx` … `5xx`; the rules count `5xx` as bad). */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** Where `countAs` leaves the status a response is recorded with. */
const COUNTED_STATUS = 'metricsCountedStatus';

/**
 * Records `res` in the request metrics with `status` instead of the status line it was sent
 * with: for an answer whose 200 went out before it failed (a streamed chat that ends with an
 * `error` event), so it counts as the failure it is (`requests_failed`, `status_class="5xx"`).
 */
export function countAs(res: Response, status: number): void {
  res.locals[COUNTED_STATUS] = status;
}

/**
 * Records every request except the operational endpoints when its response is done (or the
 * client goes away): count, success (< 400), duration, type. The type comes from `routes`, the
 * same table the rate limiter picks tiers by, so `/API/SEARCH` is counted as the search it is
 * limited and answered as, and a path no route takes is `other`.
 *
 * One `'close'` listener does it: a ServerResponse always emits `close` once, right after
 * `finish` when the response was sent in full (`writableFinished`), or when the connection went
 * away before that. A `finish` listener as well would cost about a quarter of a bare request's
 * CPU (measured with bench/ratelimit: the listener bookkeeping on the response, not the work).
 */
export function metricsMiddleware(
  stats: RequestStats,
  metrics: ServiceMetrics,
  routes: RouteTable = API_ROUTE_TABLE,
): RequestHandler {
  // Labelled children are looked up once per (type, method, status). Bounded, since methods and
  // statuses are few.
  const children = new Map<string, ReturnType<ServiceMetrics['requestDuration']['labels']>>();
  return (req, res, next) => {
    const path = req.path;
    if (isOperationalPath(path)) {
      next();
      return;
    }
    const started = performance.now();
    res.on('close', () => {
      const ms = performance.now() - started;
      // A client that hung up before the response is counted as failed (499, nginx's convention).
      const status = res.writableFinished
        ? ((res.locals[COUNTED_STATUS] as number | undefined) ?? res.statusCode)
        : 499;
      const type = requestTypeOf(req.method, path, routes);
      stats.record(type, status, ms);
      const key = `${type} ${req.method} ${status}`;
      let child = children.get(key);
      if (!child) {
        // The route label is the request type: cardinality stays bounded (ids never leak in).
        child = metrics.requestDuration.labels({ route: type, method: req.method, status_class: statusClass(status) });
        if (children.size < 1000) children.set(key, child);
      }
      child.observe(ms / 1000);
    });
    next();
  };
}
