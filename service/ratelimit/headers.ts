import type { ServerResponse } from 'node:http';
import type { TierPlan } from './tiers';
import type { Verdict } from './verdict';

/** The 429 body of spec §2.5. */
export interface RateLimitExceededBody {
  readonly error: 'rate_limit_exceeded';
  readonly message: string;
  /** Whole seconds, at least 1; equals the `Retry-After` header. */
  readonly retry_after: number;
}

/**
 * Writes the rate-limit headers of spec §2.4/§4.3 for the most constrained tier:
 * `X-RateLimit-Limit` (its effective limit per window), `X-RateLimit-Remaining` (requests it
 * would admit right now), `X-RateLimit-Reset` (Unix seconds when its bucket is full again), and
 * on a refusal `Retry-After` (whole seconds until every tier admits, at least 1).
 *
 * Beyond the spec, the IETF fields (draft-ietf-httpapi-ratelimit-headers) cover every applicable
 * tier: `RateLimit-Policy: "global";q=1000;w=3600, "ip";q=100;w=60, ...` and
 * `RateLimit: "global";r=99;t=36, "ip";r=19;t=3, ...` (r = remaining, t = seconds until full).
 */
export function writeRateLimitHeaders(res: ServerResponse, plan: TierPlan, v: Verdict, nowMs: number): void {
  const shown = v.shown;
  res.setHeader('X-RateLimit-Limit', String(plan.tiers[shown].limits.limit));
  res.setHeader('X-RateLimit-Remaining', String(v.remaining[shown]));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((nowMs + v.msUntilFull[shown]) / 1000)));
  res.setHeader('RateLimit-Policy', plan.policy);
  let fields = '';
  for (let i = 0; i < plan.tiers.length; i++) {
    if (i > 0) fields += ', ';
    fields += `"${plan.tiers[i].name}";r=${v.remaining[i]};t=${Math.ceil(v.msUntilFull[i] / 1000)}`;
  }
  res.setHeader('RateLimit', fields);
  if (!v.allowed) res.setHeader('Retry-After', String(v.retryAfterSeconds));
}

/** The 429 body, naming the tier that refused and its limits. */
export function exceededBody(plan: TierPlan, v: Verdict): RateLimitExceededBody {
  const tier = plan.tiers[v.shown];
  const { limit, windowSeconds, burst } = tier.limits;
  return {
    error: 'rate_limit_exceeded',
    message:
      `Rate limit exceeded for the ${tier.name} tier (${limit} requests per ${windowSeconds} s, burst ${burst}); ` +
      `retry in ${v.retryAfterSeconds} s`,
    retry_after: v.retryAfterSeconds,
  };
}
