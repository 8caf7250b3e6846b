import { HTTP_ROUTES, type HttpRoute, type TierMappingName } from '../../contract';
import { bool, httpMethod, int, list, num, pathPrefix, url } from '../parsers';
import { variable, type VariableSpec } from '../variables';
import { DEFAULT_STORE_TOPOLOGY, type StoreTopologySettings } from './kvstore-topology';

/** The rate-limit tiers. `global` and `ip` apply to every protected request, the rest by path. */
export type TierName = 'global' | 'ip' | 'search' | 'chat' | 'upload';
/** Every tier, in the order they are reported. */
export const TIER_NAMES: readonly TierName[] = ['global', 'ip', 'search', 'chat', 'upload'];
/** Tiers chosen by path and method. */
export type EndpointTierName = 'search' | 'chat' | 'upload';

/** One tier's limits as configured (before the environment multiplier). */
export interface TierLimits {
  /** Requests allowed per window (sustained rate = limit / windowSeconds). */
  readonly limit: number;
  /** Window length, seconds. */
  readonly windowSeconds: number;
  /** Requests admitted at once (the bucket's capacity). */
  readonly burst: number;
}

/** Path prefixes and methods that map requests onto an endpoint tier. */
export interface TierMapping {
  /** Path prefixes, matched on segment boundaries. */
  readonly paths: readonly string[];
  /** Upper-case HTTP methods. */
  readonly methods: readonly string[];
}

/** Multi-level rate limiting. */
export interface RateLimitSettings {
  /** Master switch; false = nothing is limited. @default true */
  readonly enabled: boolean;
  /** Store dedicated to rate limiting; falls back to `kvstore.url`. Secret. @default undefined */
  readonly storageUrl?: string;
  /** How `storageUrl` is reached (`RATELIMIT_STORAGE_MODE`, `…_NODES`, …); without `storageUrl` the kvstore's topology applies. @default standalone */
  readonly storageTopology: StoreTopologySettings;
  /** Configured limits per tier. @default global 1000/3600/100, ip 100/60/20, search 60/60/15, chat 30/60/10, upload 10/60/5 */
  readonly tiers: Readonly<Record<TierName, TierLimits>>;
  /** Multiplier for development and testing. @default 5.0 */
  readonly devMultiplier: number;
  /** Multiplier for staging and production. @default 1.0 */
  readonly prodMultiplier: number;
  /** Which requests fall into the chat, search and upload tiers. `export` maps into the upload tier. @default spec §4.2 */
  readonly mapping: Readonly<{ chat: TierMapping; search: TierMapping; upload: TierMapping; export: TierMapping }>;
  /** Log each refused request. @default true */
  readonly logExceeded: boolean;
  /** Warn when a tier's usage passes `alertThreshold`. @default false */
  readonly logWarnings: boolean;
  /** Log every decision. @default false */
  readonly logAll: boolean;
  /** Usage ratio (used / limit) above which a warning is logged and the near-limit counter moves. @default 0.8 */
  readonly alertThreshold: number;
  /** Produce the rate-limit metrics. @default true */
  readonly enableMetrics: boolean;
  /** IPv6 clients are keyed by this prefix length. @default 64 */
  readonly ipv6PrefixLength: number;
  /** Most client keys the memory store keeps (LRU beyond). @default 100000 */
  readonly memoryMaxKeys: number;
  /**
   * Opt-in cap on one client's share of the global tier, in (0, 1]: the effective ip tier is
   * lowered (never raised) so that one client's sustained rate is at most this share of the
   * global tier's and its burst at most this share of the global burst (`capIpTier`). Off by
   * default: the spec's defaults stand, and the startup warning says what they allow.
   * @default undefined
   */
  readonly ipGlobalShare?: number;
}

/** Derived after parsing: what is actually enforced. */
export interface EffectiveRateLimit {
  /** The multiplier of the current environment. */
  readonly multiplier: number;
  /** The ip tier before `ipGlobalShare` lowered it (after the multiplier); absent when it did not. */
  readonly ipBeforeShareCap?: TierLimits;
  /** Tiers after the multiplier (limit and burst rounded down, at least 1). */
  readonly tiers: Readonly<Record<TierName, TierLimits>>;
  /** `storageUrl ?? kvstore.url`: where the limiter keeps its state, if anywhere. */
  readonly storeUrl?: string;
}

/**
 * The default path prefixes of a tier mapping (spec §4.2), read from the route table: each route
 * of the mapping contributes its path up to its first parameter (`/api/v1/articles/:id` is under
 * `/api/v1/articles`), once, in the table's order.
 */
function defaultTierPaths(tier: TierMappingName): readonly string[] {
  const routes: readonly HttpRoute[] = Object.values(HTTP_ROUTES);
  const prefixes = routes.filter((r) => r.tier === tier).map((r) => r.path.replace(/\/[:*].*$/, ''));
  return [...new Set(prefixes)];
}

export const DEFAULT_RATE_LIMIT: RateLimitSettings = {
  enabled: true,
  storageUrl: undefined,
  storageTopology: DEFAULT_STORE_TOPOLOGY,
  tiers: {
    global: { limit: 1000, windowSeconds: 3600, burst: 100 },
    ip: { limit: 100, windowSeconds: 60, burst: 20 },
    search: { limit: 60, windowSeconds: 60, burst: 15 },
    chat: { limit: 30, windowSeconds: 60, burst: 10 },
    upload: { limit: 10, windowSeconds: 60, burst: 5 },
  },
  devMultiplier: 5.0,
  prodMultiplier: 1.0,
  mapping: {
    chat: { paths: defaultTierPaths('chat'), methods: ['POST'] },
    search: { paths: defaultTierPaths('search'), methods: ['GET', 'POST'] },
    upload: { paths: defaultTierPaths('upload'), methods: ['POST', 'PUT', 'PATCH'] },
    export: { paths: defaultTierPaths('export'), methods: ['GET'] },
  },
  logExceeded: true,
  logWarnings: false,
  logAll: false,
  alertThreshold: 0.8,
  enableMetrics: true,
  ipv6PrefixLength: 64,
  memoryMaxKeys: 100000,
  ipGlobalShare: undefined,
};

/**
 * The ip tier lowered so that one client cannot take more than `share` of the global tier: burst
 * at most `share × global.burst`, sustained rate at most `share × global rate` (limits rounded
 * down, at least 1). The window is kept when the capped limit still counts at least one request
 * in it, else the global window is used (GCRA depends on the rate and the burst only, so the
 * window is how the limit is written, not what it allows). Returned unchanged when already within.
 * Pure: evaluated once when settings are parsed, nothing per request.
 */
export function capIpTier(ip: TierLimits, global: TierLimits, share: number): TierLimits {
  const burst = Math.min(ip.burst, Math.max(1, Math.floor(share * global.burst)));
  const maxRate = (share * global.limit) / global.windowSeconds;
  let { limit, windowSeconds } = ip;
  if (limit / windowSeconds > maxRate) {
    const inOwnWindow = Math.floor(maxRate * windowSeconds + 1e-9);
    if (inOwnWindow >= 1) limit = inOwnWindow;
    else {
      windowSeconds = global.windowSeconds;
      limit = Math.max(1, Math.floor(share * global.limit + 1e-9));
    }
  }
  return { limit, windowSeconds, burst };
}

const tierVars = (tier: TierName): VariableSpec[] => {
  const T = tier.toUpperCase();
  return [
    variable(
      `RATE_LIMIT_${T}_REQUESTS`,
      `rateLimit.tiers.${tier}.limit`,
      int({ min: 1, max: 100000000 }),
      `${tier} tier: requests per window`,
    ),
    variable(
      `RATE_LIMIT_${T}_WINDOW`,
      `rateLimit.tiers.${tier}.windowSeconds`,
      int({ min: 1, max: 86400 * 7 }),
      `${tier} tier: window, seconds`,
    ),
    variable(
      `RATE_LIMIT_${T}_BURST`,
      `rateLimit.tiers.${tier}.burst`,
      int({ min: 1, max: 100000000 }),
      `${tier} tier: requests admitted at once`,
    ),
  ];
};

const mappingVars = (name: 'chat' | 'search' | 'upload' | 'export'): VariableSpec[] => {
  const N = name.toUpperCase();
  const into = name === 'export' ? 'upload tier (export paths)' : `${name} tier`;
  return [
    variable(
      `RATE_LIMIT_${N}_PATHS`,
      `rateLimit.mapping.${name}.paths`,
      list(pathPrefix()),
      `Path prefixes of the ${into}`,
    ),
    variable(
      `RATE_LIMIT_${N}_METHODS`,
      `rateLimit.mapping.${name}.methods`,
      list(httpMethod(), { minItems: 1 }),
      `Methods of the ${into}`,
    ),
  ];
};

export const RATE_LIMIT_VARIABLES: readonly VariableSpec[] = [
  variable('RATELIMIT_ENABLED', 'rateLimit.enabled', bool(), 'Enables rate limiting'),
  variable(
    'RATELIMIT_STORAGE_URL',
    'rateLimit.storageUrl',
    url(['redis', 'rediss']),
    'Store dedicated to rate limiting (else KVSTORE_URL)',
    { secret: true, secretIsPassword: true },
  ),
  ...tierVars('global'),
  ...tierVars('ip'),
  ...tierVars('search'),
  ...tierVars('chat'),
  ...tierVars('upload'),
  variable(
    'RATE_LIMIT_DEV_MULTIPLIER',
    'rateLimit.devMultiplier',
    num({ min: 0, exclusiveMin: true, max: 1000 }),
    'Multiplier of limit and burst in development and testing',
  ),
  variable(
    'RATE_LIMIT_PROD_MULTIPLIER',
    'rateLimit.prodMultiplier',
    num({ min: 0, exclusiveMin: true, max: 1000 }),
    'Multiplier of limit and burst in staging and production',
  ),
  ...mappingVars('chat'),
  ...mappingVars('search'),
  ...mappingVars('upload'),
  ...mappingVars('export'),
  variable('RATE_LIMIT_LOG_EXCEEDED', 'rateLimit.logExceeded', bool(), 'Log each refused request'),
  variable('RATE_LIMIT_LOG_WARNINGS', 'rateLimit.logWarnings', bool(), 'Warn when usage passes the alert threshold'),
  variable('RATE_LIMIT_LOG_ALL', 'rateLimit.logAll', bool(), 'Log every rate-limit decision'),
  variable(
    'RATE_LIMIT_ALERT_THRESHOLD',
    'rateLimit.alertThreshold',
    num({ min: 0, max: 1 }),
    'Usage ratio that triggers the warning',
  ),
  variable('RATE_LIMIT_ENABLE_METRICS', 'rateLimit.enableMetrics', bool(), 'Expose rate-limit metrics'),
  variable(
    'RATE_LIMIT_IPV6_PREFIX',
    'rateLimit.ipv6PrefixLength',
    int({ min: 1, max: 128 }),
    'IPv6 clients are keyed by this prefix length',
  ),
  variable(
    'RATE_LIMIT_IP_GLOBAL_SHARE',
    'rateLimit.ipGlobalShare',
    num({ min: 0, exclusiveMin: true, max: 1 }),
    "Opt-in: the most of the global tier one client may take (0-1]; lowers the effective ip tier's rate and burst to that share of the global tier's (unset: the ip tier as configured)",
  ),
  variable(
    'RATE_LIMIT_MEMORY_MAX_KEYS',
    'rateLimit.memoryMaxKeys',
    int({ min: 100, max: 10000000 }),
    'Most client keys the in-memory store keeps',
  ),
];
