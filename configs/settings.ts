import { SettingsError, type SettingsIssue } from './errors';
import { ParseFailure } from './parsers';
import { backendMemoryProblem, memoryMiB } from './sections/backend-memory';
import { AI_VARIABLES, DEFAULT_AI, aiIssues, type AiSettings } from './sections/ai';
import { ALERTING_VARIABLES, DEFAULT_ALERTING, type AlertingSettings } from './sections/alerting';
import {
  DEFAULT_EMBEDDINGS,
  EMBEDDINGS_VARIABLES,
  embeddingsIssues,
  type EmbeddingsSettings,
} from './sections/embeddings';
import { CONTENT_VARIABLES, DEFAULT_CONTENT, type ContentSettings } from './sections/content';
import {
  DEFAULT_ALERT_RULES,
  DEFAULT_DEPLOY,
  DEPLOY_VARIABLES,
  type AlertRuleSettings,
  type DeploySettings,
} from './sections/deploy';
import {
  capIpTier,
  DEFAULT_RATE_LIMIT,
  RATE_LIMIT_VARIABLES,
  TIER_NAMES,
  type EffectiveRateLimit,
  type RateLimitSettings,
  type TierLimits,
  type TierName,
} from './sections/rate-limit';
import { KVSTORE_TOPOLOGY_VARIABLES, RATE_LIMIT_TOPOLOGY_VARIABLES, topologyIssues } from './sections/kvstore-topology';
import { DEFAULT_SEARCH, SEARCH_VARIABLES, type SearchSettings } from './sections/search';
import {
  DEFAULT_KVSTORE,
  DEFAULT_SERVICE,
  SERVICE_VARIABLES,
  serviceIssues,
  type Environment,
  type KvstoreSettings,
  type ServiceSettings,
} from './sections/service';
import { getPath, type VariableSpec } from './variables';

/**
 * The one typed settings object. The service parses it at startup and the cdk8s charts at synth
 * time, through the same `loadSettings`, so deployed config and running service cannot disagree.
 */
export interface Settings {
  /** HTTP service process. */
  readonly service: ServiceSettings;
  /** Shared key-value store (Redis). */
  readonly kvstore: KvstoreSettings;
  /** Multi-level rate limiting, with `effective` derived from the environment multiplier. */
  readonly rateLimit: RateLimitSettings & { readonly effective: EffectiveRateLimit };
  /** Search, its ranking and its result cache. */
  readonly search: SearchSettings;
  /** The embedded content store. */
  readonly content: ContentSettings;
  /** Chat provider. */
  readonly ai: AiSettings;
  /** The embedder of passages and queries (off by default). */
  readonly embeddings: EmbeddingsSettings;
  /** Alertmanager receivers, routing and grouping (synth-only, secrets aside). */
  readonly alerting: AlertingSettings;
  /** Kubernetes objects around the service (synth-only). */
  readonly deploy: DeploySettings;
  /** Alert-rule thresholds (synth-only). */
  readonly alertRules: AlertRuleSettings;
}

/** Recursively optional input to `parseSettings`; derived fields cannot be given. */
export type SettingsInput = {
  readonly [K in keyof Omit<Settings, 'rateLimit'>]?: DeepPartial<Settings[K]>;
} & { readonly rateLimit?: DeepPartial<RateLimitSettings> };

/** Recursively optional; arrays are replaced whole. */
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { readonly [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** Every default, in one place. */
export const DEFAULT_SETTINGS: Omit<Settings, 'rateLimit'> & { readonly rateLimit: RateLimitSettings } = {
  service: DEFAULT_SERVICE,
  kvstore: DEFAULT_KVSTORE,
  rateLimit: DEFAULT_RATE_LIMIT,
  search: DEFAULT_SEARCH,
  content: DEFAULT_CONTENT,
  ai: DEFAULT_AI,
  embeddings: DEFAULT_EMBEDDINGS,
  alerting: DEFAULT_ALERTING,
  deploy: DEFAULT_DEPLOY,
  alertRules: DEFAULT_ALERT_RULES,
};

/** Every environment variable, grouped by section, in README order. */
export const VARIABLES: readonly VariableSpec[] = [
  ...SERVICE_VARIABLES,
  ...KVSTORE_TOPOLOGY_VARIABLES,
  ...RATE_LIMIT_VARIABLES,
  ...RATE_LIMIT_TOPOLOGY_VARIABLES,
  ...SEARCH_VARIABLES,
  ...CONTENT_VARIABLES,
  ...AI_VARIABLES,
  ...EMBEDDINGS_VARIABLES,
  ...ALERTING_VARIABLES,
  ...DEPLOY_VARIABLES,
];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Defaults, then input; `undefined` in the input never overrides a default; arrays replace. */
function merge(base: unknown, input: unknown, path: string, issues: SettingsIssue[]): unknown {
  if (input === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(input)) return input;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(input)) {
    const p = path ? `${path}.${key}` : key;
    if (!(key in base)) {
      issues.push({
        code: 'ERR_SETTINGS_UNKNOWN_KEY',
        variable: p,
        value: '',
        message: `unknown setting ${p}; known keys here: ${Object.keys(base).join(', ')}`,
      });
      continue;
    }
    out[key] = merge(base[key], value, p, issues);
  }
  return out;
}

/** Formats a value for an error message, hiding secrets. */
export function displayValue(spec: VariableSpec, value: unknown): string {
  if (spec.secret && spec.secretIsPassword && typeof value === 'string') {
    try {
      const u = new URL(value.trim());
      if (u.password) u.password = '***';
      return JSON.stringify(u.toString());
    } catch {
      return '<hidden>';
    }
  }
  if (spec.secret) return '<hidden>';
  if (typeof value === 'string') return JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** The issue for a variable whose value is bad. */
export function invalidValue(spec: VariableSpec, value: unknown): SettingsIssue {
  const shown = displayValue(spec, value);
  return {
    code: 'ERR_SETTINGS_INVALID_VALUE',
    variable: spec.name,
    value: shown,
    message: `${spec.name}=${shown} is not valid: expected ${spec.parser.accepted}`,
  };
}

function multiplierFor(env: Environment, rl: RateLimitSettings): number {
  return env === 'development' || env === 'testing' ? rl.devMultiplier : rl.prodMultiplier;
}

function scale(t: TierLimits, m: number): TierLimits {
  return {
    limit: Math.max(1, Math.floor(t.limit * m)),
    windowSeconds: t.windowSeconds,
    burst: Math.max(1, Math.floor(t.burst * m)),
  };
}

/** Rules that span several fields. */
function crossFieldIssues(s: Settings): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  const seen = new Map<string, string>();
  for (const [name, m] of Object.entries(s.rateLimit.mapping)) {
    for (const p of m.paths) {
      for (const method of m.methods) {
        const key = `${method} ${p}`;
        const other = seen.get(key);
        const tierOf = (n: string) => (n === 'export' ? 'upload' : n);
        if (other && tierOf(other) !== tierOf(name)) {
          issues.push({
            code: 'ERR_SETTINGS_CONFLICT',
            variable: `RATE_LIMIT_${name.toUpperCase()}_PATHS`,
            value: JSON.stringify(p),
            message: `${method} ${p} is mapped to both the ${other} and the ${name} tier (RATE_LIMIT_${other.toUpperCase()}_PATHS and RATE_LIMIT_${name.toUpperCase()}_PATHS); give each path prefix to one tier`,
          });
        }
        seen.set(key, name);
      }
    }
  }
  issues.push(...serviceIssues(s.service));
  issues.push(...aiIssues(s.ai));
  issues.push(...embeddingsIssues(s.embeddings));
  issues.push(...topologyIssues('KVSTORE', s.kvstore.url, s.kvstore.topology));
  issues.push(...topologyIssues('RATELIMIT_STORAGE', s.rateLimit.storageUrl, s.rateLimit.storageTopology));
  const memory = backendMemoryProblem(s.deploy.backendMemoryRequest, s.deploy.backendMemoryLimit, {
    request: 'BACKEND_MEMORY_REQUEST',
    limit: 'BACKEND_MEMORY_LIMIT',
  });
  // A value the parser refused is reported there already.
  if (
    memory &&
    memoryMiB(s.deploy.backendMemoryLimit) !== undefined &&
    memoryMiB(s.deploy.backendMemoryRequest) !== undefined
  ) {
    const limit = memory.which === 'limit';
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: limit ? 'BACKEND_MEMORY_LIMIT' : 'BACKEND_MEMORY_REQUEST',
      value: limit ? s.deploy.backendMemoryLimit : s.deploy.backendMemoryRequest,
      message: memory.message,
    });
  }
  if (s.deploy.hpaEnabled && s.deploy.hpaMaxReplicas < s.deploy.backendReplicas) {
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'HPA_MAX_REPLICAS',
      value: String(s.deploy.hpaMaxReplicas),
      message: `HPA_MAX_REPLICAS=${s.deploy.hpaMaxReplicas} is below BACKEND_REPLICAS=${s.deploy.backendReplicas}; the maximum must be at least the minimum`,
    });
  }
  return issues;
}

/**
 * Validates typed input, fills defaults and derives computed fields. Throws `SettingsError`
 * listing every problem. Pure: no environment, no I/O.
 */
export function parseSettings(input: SettingsInput = {}): Settings {
  const issues: SettingsIssue[] = [];
  const merged = merge(DEFAULT_SETTINGS, input, '', issues) as Omit<Settings, 'rateLimit'> & {
    rateLimit: RateLimitSettings;
  };
  for (const spec of VARIABLES) {
    const value = getPath(merged, spec.path);
    if (value === undefined && getPath(DEFAULT_SETTINGS, spec.path) === undefined) continue;
    try {
      spec.parser.check(value);
    } catch (e) {
      if (!(e instanceof ParseFailure)) throw e;
      issues.push(invalidValue(spec, value));
    }
  }
  if (issues.length) throw new SettingsError(issues);

  const multiplier = multiplierFor(merged.service.environment, merged.rateLimit);
  const tiers = Object.fromEntries(TIER_NAMES.map((t) => [t, scale(merged.rateLimit.tiers[t], multiplier)])) as Record<
    TierName,
    TierLimits
  >;
  let ipBeforeShareCap: TierLimits | undefined;
  const share = merged.rateLimit.ipGlobalShare;
  if (share !== undefined) {
    const capped = capIpTier(tiers.ip, tiers.global, share);
    if (
      capped.limit !== tiers.ip.limit ||
      capped.windowSeconds !== tiers.ip.windowSeconds ||
      capped.burst !== tiers.ip.burst
    ) {
      ipBeforeShareCap = tiers.ip;
      tiers.ip = capped;
    }
  }
  const settings: Settings = {
    ...merged,
    rateLimit: {
      ...merged.rateLimit,
      effective: {
        multiplier,
        tiers,
        storeUrl: merged.rateLimit.storageUrl ?? merged.kvstore.url,
        ...(ipBeforeShareCap ? { ipBeforeShareCap } : {}),
      },
    },
  };
  const conflicts = crossFieldIssues(settings);
  if (conflicts.length) throw new SettingsError(conflicts);
  return settings;
}
