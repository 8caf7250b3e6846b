import { Router, type Request } from 'express';
import { type TIER_NAMES } from '../../configs';
import type { CoreDeps } from '../core-deps';
import type { ContentHealth, HealthRecord, SemanticHealth } from '../http/contract/ops';
import { openApiDocument } from '../http/contract/openapi';
import type { CacheStats } from '../metrics/service-metrics';
import type { RateLimiter } from '../ratelimit/types';
import { requestClientId } from '../ratelimit/client-key';
import { rateLimitWarnings } from '../ratelimit/starvation';
import { SERVICE_VERSION } from '../lib/version';
import { HTTP_ROUTES, SERVICE_NAME } from '../../contract';

/**
 * What the operational endpoints read: the core dependencies, the rate limiter's state, the result
 * cache and the content's health. The composition root's `AppDeps` is one; declared here, not
 * imported from deps.ts, so routes never import the wiring that imports them.
 */
export interface OpsDeps extends CoreDeps {
  readonly rateLimiter: Pick<RateLimiter, 'status' | 'backend'>;
  readonly features: { readonly cache: CacheStats; contentHealth?(): ContentHealth; semanticHealth?(): SemanticHealth };
}

/** The health record of `/health` and `/api/health`. */
export function healthRecord(deps: OpsDeps): HealthRecord {
  const { score, grade } = deps.metrics.health();
  const kvstore = deps.kvstore.state;
  // A store that is connected but not answering (`unresponsive`) is as degraded as a lost one. A
  // file store whose compaction fails still takes writes, but its disk needs a look; one that
  // refuses writes (a full disk) serves reads and search but not writers.
  const content = deps.features.contentHealth?.();
  const contentWrites = content?.writes?.status;
  // Content in a kvstore that evicted keys lately, or whose policy turned to evicting unaccepted.
  const degraded =
    deps.kvstore.degraded ||
    deps.rateLimitKvstore.degraded ||
    deps.kvstore.eviction.degraded ||
    content?.compaction?.status === 'failing' ||
    (contentWrites !== undefined && contentWrites !== 'ok');
  return {
    status: deps.lifecycle.state === 'draining' ? 'draining' : degraded ? 'degraded' : 'ok',
    service: SERVICE_NAME,
    version: SERVICE_VERSION,
    environment: deps.settings.service.environment,
    uptime_seconds: Math.max(0, Math.round((deps.clock.now() - deps.lifecycle.startedAt) / 1000)),
    timestamp: new Date(deps.clock.now()).toISOString(),
    kvstore,
    kvstore_mode: deps.kvstore.mode,
    ...(deps.kvstore.client
      ? { kvstore_writes: deps.kvstore.writes, kvstore_eviction: deps.kvstore.eviction.status }
      : {}),
    ...(deps.rateLimitKvstore !== deps.kvstore
      ? {
          rate_limit_store: deps.rateLimitKvstore.state,
          rate_limit_store_mode: deps.rateLimitKvstore.mode,
          ...(deps.rateLimitKvstore.client ? { rate_limit_store_eviction: deps.rateLimitKvstore.eviction.status } : {}),
        }
      : {}),
    content,
    ...(deps.features.semanticHealth ? { semantic: deps.features.semanticHealth() } : {}),
    rate_limit: deps.rateLimiter.status(),
    rate_limit_backend: deps.rateLimiter.backend(),
    health_score: score,
    performance_grade: grade,
  };
}

/** The rate-limit status record of spec §2.2: configuration after the environment multiplier. */
export function rateLimitRecord(deps: OpsDeps, req: Request) {
  const eff = deps.settings.rateLimit.effective.tiers;
  const warnings = rateLimitWarnings(deps.settings.rateLimit.enabled, eff);
  const tier = (t: (typeof TIER_NAMES)[number]) => ({
    limit: eff[t].limit,
    window_seconds: eff[t].windowSeconds,
    burst: eff[t].burst,
  });
  return {
    rate_limits: { global: tier('global'), ip: tier('ip'), search: tier('search'), upload: tier('upload') },
    backend: deps.rateLimiter.backend(),
    // The key the limiter charges this request to, not the raw forwarded value: a forwarded
    // `unknown` or `300.1.1.1` is ignored by the limiter (the socket address is used), an IPv6
    // client is keyed by its RATE_LIMIT_IPV6_PREFIX network, `::ffff:a.b.c.d` is `a.b.c.d`.
    client_ip: requestClientId(
      req.ip,
      req.socket.remoteAddress,
      deps.settings.service.trustProxy === 0,
      deps.settings.rateLimit.ipv6PrefixLength,
    ),
    environment: deps.settings.service.environment,
    alert_threshold: deps.settings.rateLimit.alertThreshold,
    log_warnings: deps.settings.rateLimit.logWarnings,
    log_all: deps.settings.rateLimit.logAll,
    // Added to the spec's record (its keys unchanged): what the limits allow that the operator
    // should know, e.g. one client able to exhaust the global tier (ratelimit/starvation.ts).
    warnings,
  };
}

/** Operational endpoints of spec §4.1; never rate limited, not counted as traffic. */
export function opsRouter(deps: OpsDeps): Router {
  const r = Router();
  r.get(HTTP_ROUTES.prometheusMetrics.path, async (_req, res) => {
    const text = await deps.registry.metrics();
    res.set('Content-Type', 'text/plain; version=0.0.4; charset=utf-8').send(text);
  });
  r.get([HTTP_ROUTES.health.path, HTTP_ROUTES.apiHealth.path], (_req, res) => {
    res.json(healthRecord(deps));
  });
  r.get(HTTP_ROUTES.live.path, (_req, res) => {
    res.json({ status: 'alive' });
  });
  // Readiness follows the lifecycle only: a kvstore outage or pause hits every replica at once,
  // and taking them all out of the Service would turn a degraded service (reads, search and
  // memory rate limits still work) into no service. `/health` reports the outage instead.
  r.get(HTTP_ROUTES.ready.path, (_req, res) => {
    const state = deps.lifecycle.state;
    res.status(state === 'ready' ? 200 : 503).json({
      status: state === 'ready' ? 'ready' : 'not_ready',
      state,
      kvstore: deps.kvstore.state,
      kvstore_mode: deps.kvstore.mode,
    });
  });
  r.get(HTTP_ROUTES.metrics.path, (_req, res) => {
    const { score, grade, snapshot: s } = deps.metrics.health();
    const cache = deps.features.cache;
    const max = cache.maxSize();
    res.json({
      requests: {
        total: s.total,
        successful: s.successful,
        failed: s.failed,
        success_rate: s.successRate,
        avg_response_time_ms: s.avgResponseTimeMs,
        window_seconds: deps.stats.windowSeconds,
      },
      total_tokens_used: s.tokensUsed,
      tokens_estimated: s.tokensEstimated,
      health_score: score,
      performance_grade: grade,
      cache: { size: cache.size(), maxsize: max, usage_percent: max ? (100 * cache.size()) / max : 0 },
      requests_by_type: Object.fromEntries(
        Object.entries(s.byType).map(([t, v]) => [t, { total: v.count, avg_time_ms: v.avgTimeMs }]),
      ),
      uptime_seconds: Math.round((deps.clock.now() - deps.lifecycle.startedAt) / 1000),
    });
  });
  r.get(HTTP_ROUTES.rateLimit.path, (req, res) => {
    res.json(rateLimitRecord(deps, req));
  });
  // Generated from the route schemas once, on the first request (it does not change at run time).
  let openapi: string | undefined;
  r.get(HTTP_ROUTES.openapi.path, (_req, res) => {
    openapi ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(openapi);
  });
  return r;
}
