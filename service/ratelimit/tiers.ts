import type { EndpointTierName, Settings, TierLimits, TierName } from '../../configs';
import { API_ROUTE_TABLE, isOperationalPath, underPrefix, type RouteTable } from '../metrics/request-types';
import { gcraLimits, type GcraLimits } from './gcra';

/** Prefix of every key the limiter writes (the kvstore may be shared with content). */
export const KEY_PREFIX = 'ratelimit:';

/** One tier as enforced: name, effective limits and their integer GCRA form. */
export interface PlannedTier {
  readonly name: TierName;
  /** Limits after the environment multiplier. */
  readonly limits: TierLimits;
  readonly gcra: GcraLimits;
}

/**
 * The tiers one request is checked against: `global`, `ip`, then the endpoint tier if any; or
 * `ip` alone for a request no route of the API takes. Built once at startup (one plan per
 * endpoint tier) so the hot path allocates nothing but keys.
 */
export interface TierPlan {
  /** The endpoint tier, or undefined for IP + Global (or IP only). */
  readonly endpoint: EndpointTierName | undefined;
  readonly tiers: readonly PlannedTier[];
  /** IETF `RateLimit-Policy` value: one item per tier. */
  readonly policy: string;
  /** Store keys of each tier for a client id, in `tiers` order. */
  keys(client: string): string[];
}

interface Rule {
  readonly prefix: string;
  readonly methods: ReadonlySet<string>;
  readonly plan: TierPlan;
}

function buildPlan(names: readonly TierName[], eff: Readonly<Record<TierName, TierLimits>>): TierPlan {
  const endpoint = names.find((n): n is EndpointTierName => n !== 'global' && n !== 'ip');
  const tiers = names.map((name) => ({ name, limits: eff[name], gcra: gcraLimits(eff[name]) }));
  const policy = tiers.map((t) => `"${t.name}";q=${t.limits.limit};w=${t.limits.windowSeconds}`).join(', ');
  const prefixes = names.map((name) => `${KEY_PREFIX}${name}:`);
  const keys =
    names.length === 1
      ? (client: string) => [prefixes[0] + client]
      : endpoint
        ? (client: string) => [`${KEY_PREFIX}global`, prefixes[1] + client, prefixes[2] + client]
        : (client: string) => [`${KEY_PREFIX}global`, prefixes[1] + client];
  return { endpoint, tiers, policy, keys };
}

/**
 * Maps a request's path and method to its tier plan. Operational endpoints (spec §4.1, plus
 * `/api/metrics/prometheus` and `/api/health`) are exempt. A request no route of the API takes
 * (`routes`, the table the request metrics use too) is charged to the ip tier only: the global
 * tier protects the service from real load, and a scanner's 404s must not exhaust it for
 * everyone; its own ip bucket still limits the scanner. Path prefixes match on segment
 * boundaries and case-insensitively (Express routes case-insensitively, so `/API/Search` reaches
 * the search handler and must land in the search tier); the longest matching prefix wins; `HEAD`
 * counts as `GET` where only `GET` is listed (Express answers HEAD with the GET handler).
 */
export class TierResolver {
  private readonly rules: readonly Rule[];
  /** IP + Global only. */
  readonly base: TierPlan;
  /** IP only: requests no route takes. */
  readonly unrouted: TierPlan;
  /** One plan per endpoint tier. */
  readonly plans: Readonly<Record<EndpointTierName, TierPlan>>;

  constructor(
    rateLimit: Settings['rateLimit'],
    private readonly routes: RouteTable = API_ROUTE_TABLE,
  ) {
    const eff = rateLimit.effective.tiers;
    this.base = buildPlan(['global', 'ip'], eff);
    this.unrouted = buildPlan(['ip'], eff);
    this.plans = {
      search: buildPlan(['global', 'ip', 'search'], eff),
      chat: buildPlan(['global', 'ip', 'chat'], eff),
      upload: buildPlan(['global', 'ip', 'upload'], eff),
    };
    const m = rateLimit.mapping;
    const sources: ReadonlyArray<
      readonly [EndpointTierName, { paths: readonly string[]; methods: readonly string[] }]
    > = [
      ['chat', m.chat],
      ['search', m.search],
      ['upload', m.upload],
      ['upload', m.export],
    ];
    const rules: Rule[] = [];
    for (const [tier, mapping] of sources) {
      const methods = new Set(mapping.methods.map((x) => x.toUpperCase()));
      if (methods.has('GET')) methods.add('HEAD');
      for (const p of mapping.paths) rules.push({ prefix: p.toLowerCase(), methods, plan: this.plans[tier] });
    }
    // Longest prefix first, so `/api/v1/chat` beats a broader `/api/v1` of another tier.
    this.rules = rules.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The plan for a request, or undefined when the path is exempt from rate limiting. */
  resolve(path: string, method: string): TierPlan | undefined {
    if (isOperationalPath(path)) return undefined;
    if (!this.routes.match(method, path)) return this.unrouted;
    const p = path.toLowerCase();
    const upper = method.toUpperCase();
    for (const rule of this.rules) {
      if ((rule.prefix === '/' || underPrefix(p, rule.prefix)) && rule.methods.has(upper)) return rule.plan;
    }
    return this.base;
  }
}
