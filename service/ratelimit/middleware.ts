import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { RateLimitSettings } from '../../configs';
import { requestClientId } from './client-key';
import { exceededBody, writeRateLimitHeaders } from './headers';
import type { RateLimitMetrics } from './metrics';
import type { TierPlan, TierResolver } from './tiers';
import { TurnBurst } from './turn-burst';
import type { Decision, DecisionStore, RateLimitBackend } from './types';
import { verdictOf, type Verdict } from './verdict';

/** What the middleware needs, built once by `createRateLimiter`. */
export interface MiddlewareContext {
  readonly settings: RateLimitSettings;
  readonly resolver: TierResolver;
  readonly store: DecisionStore & { backend(): RateLimitBackend };
  readonly logger: Logger;
  /** Absent when RATE_LIMIT_ENABLE_METRICS=false. */
  readonly metrics?: RateLimitMetrics;
  /**
   * True when no proxy is trusted (TRUST_PROXY=0): `req.ip` is then the socket address, read
   * directly instead of through proxy-addr's header walk.
   */
  readonly socketAddress?: boolean;
}

/**
 * The rate-limit middleware: resolves the request's tiers, asks the store for one atomic decision,
 * writes the headers, then calls `next()` or answers 429. Exempt paths pass untouched.
 *
 * The store never rejects (the failover store answers from memory when the kvstore fails); should
 * anything still throw, the request is let through and the error logged, explicitly: a broken
 * limiter must not turn into a 5xx.
 */
export function rateLimitMiddleware(ctx: MiddlewareContext): RequestHandler {
  const { resolver, store, logger, metrics, socketAddress } = ctx;
  const { ipv6PrefixLength, logExceeded, logWarnings, logAll, alertThreshold } = ctx.settings;
  const watchUsage = logWarnings || metrics !== undefined;

  /** Logs and counts a decision. */
  const report = (req: Request, plan: TierPlan, keys: readonly string[], client: string, v: Verdict) => {
    const tiers = plan.tiers;
    if (metrics) for (let i = 0; i < tiers.length; i++) metrics.verdict(tiers[i].name, v.admitted[i]);
    if (v.allowed && watchUsage) {
      for (let i = 0; i < tiers.length; i++) {
        const burst = tiers[i].limits.burst;
        const used = burst - v.remaining[i];
        if (used < alertThreshold * burst) continue;
        metrics?.nearLimit(tiers[i].name);
        // Warn when this request crossed the threshold, not on every request above it.
        if (logWarnings && used - 1 < alertThreshold * burst) {
          logger.warn(
            { tier: tiers[i].name, key: keys[i], client, path: req.path, used, burst, threshold: alertThreshold },
            'rate limit usage passed the alert threshold',
          );
        }
      }
    }
    const shown = tiers[v.shown];
    if (!v.allowed && logExceeded) {
      logger.info(
        {
          tier: shown.name,
          key: keys[v.shown],
          client,
          method: req.method,
          path: req.path,
          retry_after: v.retryAfterSeconds,
        },
        'rate limit exceeded',
      );
    } else if (logAll) {
      logger.info(
        {
          tier: shown.name,
          key: keys[v.shown],
          client,
          method: req.method,
          path: req.path,
          allowed: v.allowed,
          limit: shown.limits.limit,
          remaining: v.remaining[v.shown],
        },
        'rate limit decision',
      );
    }
  };

  /** Acts on a decision: metrics, headers, logs, then `next()` or a 429. */
  const decided = (
    req: Request,
    res: Response,
    next: NextFunction,
    plan: TierPlan,
    keys: readonly string[],
    client: string,
    backend: RateLimitBackend,
    started: number,
    d: Decision,
  ) => {
    try {
      metrics?.decided(backend, (performance.now() - started) / 1000);
      const v = verdictOf(plan, d);
      if (!res.headersSent) writeRateLimitHeaders(res, plan, v, d.now);
      report(req, plan, keys, client, v);
      if (!v.allowed) {
        res.status(429).json(exceededBody(plan, v));
        return;
      }
    } catch (err) {
      next(err);
      return;
    }
    next();
  };

  const burst = new TurnBurst((err) => logger.error({ err }, 'rate limiter failed to act on a decision'));

  return (req, res, next) => {
    const plan = resolver.resolve(req.path, req.method);
    if (plan === undefined) {
      next();
      return;
    }
    const peer = req.socket.remoteAddress;
    const client = requestClientId(req.ip, peer, socketAddress === true, ipv6PrefixLength);
    const keys = plan.keys(client);
    const backend = metrics ? store.backend() : 'memory';
    const started = metrics ? performance.now() : 0;
    // The memory store decides without I/O: no promise, no microtask. The decision is made now;
    // acting on it waits for the end of the turn unless this is the turn's first request (turn-burst.ts).
    let now: Decision | undefined;
    try {
      now = store.decideAtOnce?.(plan, keys);
    } catch (err) {
      logger.error({ err, path: req.path }, 'rate limiter failed; request let through unlimited');
      next();
      return;
    }
    if (now !== undefined) {
      const d = now;
      burst.run(() => decided(req, res, next, plan, keys, client, backend, started, d));
      return;
    }
    store.decide(plan, keys).then(
      (d: Decision) => decided(req, res, next, plan, keys, client, backend, started, d),
      (err: unknown) => {
        logger.error({ err, path: req.path }, 'rate limiter failed; request let through unlimited');
        next();
      },
    );
  };
}
