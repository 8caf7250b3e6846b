import { isIP } from 'node:net';
import type { SettingsIssue } from '../errors';
import { ParseFailure, bool, int, oneOf, size, str, url, type Parser } from '../parsers';
import { variable, type VariableSpec } from '../variables';
import { DEFAULT_STORE_TOPOLOGY, type StoreTopologySettings } from './kvstore-topology';
import { KVSTORE_DURABILITIES, type KvstoreDurability } from './kvstore-durability';
import { SERVICE_PORT } from '../../contract';

/** Deployment environment; decides the rate-limit multiplier. */
export type Environment = 'development' | 'testing' | 'staging' | 'production';
/** Every accepted `ENVIRONMENT`. */
export const ENVIRONMENTS: readonly Environment[] = ['development', 'testing', 'staging', 'production'];

/** pino log levels. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Which proxies are trusted to report the client address in `X-Forwarded-For`.
 * A number is a hop count (0 = no proxy: the socket address is the client); a list holds the
 * trusted proxies' addresses or CIDRs (or the names `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = number | readonly string[];

/** Process-level settings of the HTTP service. */
export interface ServiceSettings {
  /** TCP port the service listens on. @default 8080 */
  readonly port: number;
  /** Deployment environment (`ENVIRONMENT`, else `NODE_ENV`). @default 'development' */
  readonly environment: Environment;
  /** Log level of the JSON logs. @default 'info' */
  readonly logLevel: LogLevel;
  /** Bearer token required by write endpoints. Secret. @default undefined (writes open in development, refused in production) */
  readonly apiToken?: string;
  /** Folder of the embedded content store. @default './data' */
  readonly dataDir: string;
  /** Trusted proxies for client addresses. @default 0 (none) */
  readonly trustProxy: TrustProxy;
  /** Largest accepted request body (JSON, upload), bytes. @default 10 MiB */
  readonly maxBodyBytes: number;
  /** How long SIGTERM waits for in-flight requests before closing connections, seconds. @default 10 */
  readonly shutdownTimeoutSeconds: number;
  /**
   * Longest time a client may take to send a whole request (headers and body), milliseconds;
   * past it Node answers 408 and closes the connection. Bounds a body trickled in byte by byte.
   * Not the time to answer: a streamed chat answer may run longer. @default 30000
   */
  readonly requestTimeoutMs: number;
  /** Longest time a client may take to send the request headers, milliseconds; at most `requestTimeoutMs`. @default 10000 */
  readonly headersTimeoutMs: number;
  /** How long an idle keep-alive connection stays open, milliseconds; above a load balancer's idle timeout (60 s on most) to avoid 502s. @default 65000 */
  readonly keepAliveTimeoutMs: number;
  /**
   * Load the demo corpus (this project's README.md and docs/*.md, one article per section) at
   * start when the content store is empty. Never in production.
   * @default undefined (on in development, off elsewhere)
   */
  readonly demoContent?: boolean;
  /** Serve the search page at `/` (reads only, no token). @default undefined (on in development, off elsewhere) */
  readonly searchPage?: boolean;
}

/** The shared key-value store (Redis). */
export interface KvstoreSettings {
  /** `redis://` or `rediss://` URL; without it everything lives in memory / on disk. Secret when it holds a password. @default undefined */
  readonly url?: string;
  /** Password, overriding one in the URL. Secret. @default undefined */
  readonly password?: string;
  /** Per-command timeout, milliseconds: a slow kvstore must not slow requests. @default 250 */
  readonly commandTimeoutMs: number;
  /** Connect timeout, milliseconds. @default 1000 */
  readonly connectTimeoutMs: number;
  /**
   * Prefix of the content keys (`<prefix>:items`, `<prefix>:changes`). Rate-limit keys keep
   * their own `ratelimit:` namespace, which the prefix may not enter.
   * @default 'svc-ai-search:content'
   */
  readonly keyPrefix: string;
  /** Standalone, Cluster or Sentinel, with the extra addresses those need (`KVSTORE_MODE`, `KVSTORE_NODES`, …). @default standalone */
  readonly topology: StoreTopologySettings;
  /**
   * When a content write is acknowledged (`KVSTORE_DURABILITY`, see `KvstoreDurability`).
   * @default undefined: `defaultDurability(mode)` (replica in sentinel mode, primary otherwise)
   */
  readonly durability?: KvstoreDurability;
  /**
   * Start with content in a kvstore whose `maxmemory-policy` may evict the content keys
   * (`allkeys-*`): Redis then drops whole keys when it is full, and acknowledged items are lost
   * once no replica holds them. Without it such a policy is a startup error; with it the service
   * starts, `/health` says `kvstore_eviction.policy_risk: "accepted"`, and evictions are still
   * watched, reported and written back (docs/failure-behaviour.md).
   * @default false
   */
  readonly acceptEviction: boolean;
  /**
   * How often, milliseconds, the service reads each kvstore's `maxmemory-policy` and
   * `evicted_keys` while connected (CONFIG GET, INFO stats and INFO server: three small commands
   * per poll and primary), the rate limiter's store too: a policy turned evicting, or an
   * eviction, shows in `/health` and the metric within one interval.
   * @default 5000
   */
  readonly evictionCheckMs: number;
}

export const DEFAULT_SERVICE: ServiceSettings = {
  port: SERVICE_PORT,
  environment: 'development',
  logLevel: 'info',
  apiToken: undefined,
  dataDir: './data',
  trustProxy: 0,
  maxBodyBytes: 10 * 1024 * 1024,
  shutdownTimeoutSeconds: 10,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 65_000,
  demoContent: undefined,
  searchPage: undefined,
};

export const DEFAULT_KVSTORE: KvstoreSettings = {
  url: undefined,
  password: undefined,
  commandTimeoutMs: 250,
  connectTimeoutMs: 1000,
  keyPrefix: 'svc-ai-search:content',
  topology: DEFAULT_STORE_TOPOLOGY,
  durability: undefined,
  acceptEviction: false,
  evictionCheckMs: 5000,
};

/**
 * Namespace of the rate limiter's keys in the kvstore (`ratelimit:global`, `ratelimit:ip:…`;
 * service/ratelimit `KEY_PREFIX`). Content keys must stay out of it.
 */
export const RATE_LIMIT_KEY_NAMESPACE = 'ratelimit';

/** `KVSTORE_KEY_PREFIX`: Redis key characters, no spaces, not starting or ending with `:`, not under `ratelimit:`. */
export function keyPrefixParser(): Parser<string> {
  return str({
    pattern: new RegExp(
      `^(?!${RATE_LIMIT_KEY_NAMESPACE}(?::|$))[A-Za-z0-9_.{}/-](?:[A-Za-z0-9_.:{}/-]{0,126}[A-Za-z0-9_.{}/-])?$`,
    ),
    accepted: `1 to 128 characters of letters, digits and _ . : { } / -, not starting or ending with : and outside the rate limiter's ${RATE_LIMIT_KEY_NAMESPACE}: keys`,
  });
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyEntry(s: string): boolean {
  if (PROXY_NAMES.has(s)) return true;
  const [addr, bits, ...rest] = s.split('/');
  const family = isIP(addr);
  if (!family || rest.length) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** `TRUST_PROXY`: a hop count or a list of addresses/CIDRs. `true` is refused (it trusts spoofed headers). */
export function trustProxyParser(): Parser<TrustProxy> {
  const check = (v: unknown): TrustProxy => {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 10) return v;
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && isProxyEntry(x)))
      return v as string[];
    throw new ParseFailure();
  };
  return {
    accepted:
      'a hop count from 0 to 10 (0 or false = no proxy) or a comma-separated list of proxy IPs/CIDRs (or loopback, linklocal, uniquelocal)',
    check,
    parse: (raw) => {
      const s = raw.trim().toLowerCase();
      if (s === 'false' || s === 'no' || s === 'none') return 0;
      if (/^\d+$/.test(s)) return check(Number(s));
      return check(
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      );
    },
  };
}

export const SERVICE_VARIABLES: readonly VariableSpec[] = [
  variable('PORT', 'service.port', int({ min: 1, max: 65535 }), 'TCP port of the HTTP service'),
  variable(
    'ENVIRONMENT',
    'service.environment',
    oneOf(ENVIRONMENTS),
    'development, testing, staging or production; falls back to NODE_ENV (test → testing, prod → production)',
  ),
  variable(
    'LOG_LEVEL',
    'service.logLevel',
    oneOf<LogLevel>(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    'Level of the JSON logs',
  ),
  variable('API_TOKEN', 'service.apiToken', str(), 'Bearer token for write endpoints (ingest, ingest-batch, upload)', {
    secret: true,
  }),
  variable('DATA_DIR', 'service.dataDir', str(), 'Folder of the embedded durable content store'),
  variable('TRUST_PROXY', 'service.trustProxy', trustProxyParser(), 'Proxies trusted for X-Forwarded-For'),
  variable(
    'MAX_BODY_SIZE',
    'service.maxBodyBytes',
    size({ min: 1024 }),
    'Largest request body (JSON and uploads); larger gets 413',
  ),
  variable(
    'REQUEST_TIMEOUT_MS',
    'service.requestTimeoutMs',
    int({ min: 1000, max: 3_600_000 }),
    'Longest time to receive a whole request (headers and body), ms; then 408 and the connection closes',
  ),
  variable(
    'HEADERS_TIMEOUT_MS',
    'service.headersTimeoutMs',
    int({ min: 1000, max: 3_600_000 }),
    'Longest time to receive the request headers, ms; at most REQUEST_TIMEOUT_MS',
  ),
  variable(
    'KEEP_ALIVE_TIMEOUT_MS',
    'service.keepAliveTimeoutMs',
    int({ min: 1000, max: 3_600_000 }),
    'How long an idle keep-alive connection stays open, ms (above the load balancer idle timeout)',
  ),
  variable(
    'SHUTDOWN_TIMEOUT_SECONDS',
    'service.shutdownTimeoutSeconds',
    int({ min: 0, max: 300 }),
    'On SIGTERM, how long in-flight requests may drain',
  ),
  variable(
    'DEMO_CONTENT',
    'service.demoContent',
    bool(),
    'Load the demo corpus (README.md and docs/*.md as section articles) at start into an empty store; default on in development only, refused in production',
  ),
  variable(
    'SEARCH_PAGE',
    'service.searchPage',
    bool(),
    'Serve the search page at / (search, filters, paging, streamed chat; reads only); default on in development only',
  ),
  variable(
    'KVSTORE_URL',
    'kvstore.url',
    url(['redis', 'rediss']),
    'Key-value store (Redis) for rate limits and content; unset = memory/disk',
    { secret: true, secretIsPassword: true },
  ),
  variable('KVSTORE_PASSWORD', 'kvstore.password', str(), 'Key-value store password (overrides one in the URL)', {
    secret: true,
  }),
  variable(
    'KVSTORE_COMMAND_TIMEOUT_MS',
    'kvstore.commandTimeoutMs',
    int({ min: 10, max: 60000 }),
    'Per-command timeout for the key-value store, ms',
  ),
  variable(
    'KVSTORE_CONNECT_TIMEOUT_MS',
    'kvstore.connectTimeoutMs',
    int({ min: 10, max: 60000 }),
    'Connect timeout for the key-value store, ms',
  ),
  variable(
    'KVSTORE_DURABILITY',
    'kvstore.durability',
    oneOf(KVSTORE_DURABILITIES),
    "When a content write is acknowledged: primary (the primary ran it), primary-disk (and fsynced its AOF: WAITAOF 1 0, Redis 7.2+, appendonly yes), replica (and one replica holds it: WAIT 1), replica-disk (on the primary's and a replica's disk: WAITAOF 1 1); unset = replica in sentinel mode, primary otherwise",
  ),
  variable(
    'KVSTORE_ACCEPT_EVICTION',
    'kvstore.acceptEviction',
    bool(),
    "Start although the kvstore's maxmemory-policy may evict content keys (allkeys-*): otherwise a startup error; /health then says the risk is accepted",
  ),
  variable(
    'KVSTORE_EVICTION_CHECK_MS',
    'kvstore.evictionCheckMs',
    int({ min: 100, max: 3_600_000 }),
    "How often each kvstore's maxmemory-policy and evicted_keys are read (CONFIG GET, INFO stats, INFO server per primary), ms: a policy turned evicting, or an eviction, shows in /health within this; the rate limiter's store too",
  ),
  variable(
    'KVSTORE_KEY_PREFIX',
    'kvstore.keyPrefix',
    keyPrefixParser(),
    'Prefix of the content keys in the key-value store (`<prefix>:items`, `<prefix>:changes`); rate-limit keys stay under `ratelimit:`',
  ),
];

/** Whether the demo corpus loads: `DEMO_CONTENT` when set, else only in development. */
export function demoContentEnabled(s: ServiceSettings): boolean {
  return s.demoContent ?? s.environment === 'development';
}

/** Whether the search page is served at `/`: `SEARCH_PAGE` when set, else only in development. */
export function searchPageEnabled(s: ServiceSettings): boolean {
  return s.searchPage ?? s.environment === 'development';
}

/** Rules between service settings: headers due no later than the whole request; no demo content in production. */
export function serviceIssues(s: ServiceSettings): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  if (s.demoContent && s.environment === 'production') {
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'DEMO_CONTENT',
      value: 'true',
      message:
        'DEMO_CONTENT=true with ENVIRONMENT=production; accepted: demo content outside production only (unset DEMO_CONTENT)',
    });
  }
  if (s.headersTimeoutMs <= s.requestTimeoutMs) return issues;
  return [
    ...issues,
    {
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'HEADERS_TIMEOUT_MS',
      value: String(s.headersTimeoutMs),
      message: `HEADERS_TIMEOUT_MS=${s.headersTimeoutMs} is above REQUEST_TIMEOUT_MS=${s.requestTimeoutMs}; accepted: a headers timeout at most the request timeout (raise REQUEST_TIMEOUT_MS or lower HEADERS_TIMEOUT_MS)`,
    },
  ];
}
