import type { RequestHandler } from 'express';
import { isOperationalPath, requestTypeOf } from './request-types';
import type { RequestStats } from './request-stats';
import type { ServiceMetrics } from './service-metrics';

/** Route label of the histogram: the request type keeps cardinality bounded (ids never leak in). */
function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * Records every request except the operational endpoints when its response finishes (or the
 * client goes away): count, success (< 400), duration, type.
 */
export function metricsMiddleware(stats: RequestStats, metrics: ServiceMetrics): RequestHandler {
  // Labelled children are looked up once per (type, method, status): prom-client hashes labels on
  // every observe() otherwise. Bounded, since methods and statuses are few.
  const children = new Map<string, ReturnType<ServiceMetrics['requestDuration']['labels']>>();
  return (req, res, next) => {
    if (isOperationalPath(req.path)) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // A client that hung up before the response is counted as failed (499, nginx's convention).
      const status = res.writableFinished ? res.statusCode : 499;
      const type = requestTypeOf(req.path);
      stats.record(type, status, ms);
      const key = `${type} ${req.method} ${status}`;
      let child = children.get(key);
      if (!child) {
        child = metrics.requestDuration.labels({ route: type, method: req.method, status_class: statusClass(status) });
        if (children.size < 1000) children.set(key, child);
      }
      child.observe(ms / 1000);
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
