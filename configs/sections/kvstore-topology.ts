import type { SettingsIssue } from '../errors';
import { list, oneOf, str, type Parser } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/**
 * How a Redis deployment is reached: one server (`standalone`), a Redis Cluster (`cluster`: the URL
 * names a seed node, the client learns the slots from it) or a Sentinel-managed master
 * (`sentinel`: the URL and `…_NODES` name sentinels, which say where the master is now).
 */
export type KvstoreMode = 'standalone' | 'cluster' | 'sentinel';
/** Every accepted `KVSTORE_MODE` / `RATELIMIT_STORAGE_MODE`. */
export const KVSTORE_MODES: readonly KvstoreMode[] = ['standalone', 'cluster', 'sentinel'];

/**
 * Everything a client needs besides the URL to reach one store, whichever mode: the kvstore's
 * (`KVSTORE_*`) or the rate limiter's own (`RATELIMIT_STORAGE_*`).
 */
export interface StoreTopologySettings {
  /** Connection mode. @default 'standalone' */
  readonly mode: KvstoreMode;
  /**
   * More addresses (`host:port`) besides the URL's: cluster seed nodes in `cluster` mode,
   * sentinels in `sentinel` mode; refused in `standalone`. @default []
   */
  readonly nodes: readonly string[];
  /** Name the sentinels monitor the master under; required in `sentinel` mode only. @default undefined */
  readonly sentinelMaster?: string;
  /** Password of the sentinels themselves (the master's is in the URL or `…_PASSWORD`). Secret. @default undefined */
  readonly sentinelPassword?: string;
}

/** Defaults of both stores' topology: today's single server. */
export const DEFAULT_STORE_TOPOLOGY: StoreTopologySettings = {
  mode: 'standalone',
  nodes: [],
  sentinelMaster: undefined,
  sentinelPassword: undefined,
};

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?):(\d{1,5})$/;

/** `host:port` (a name, an IPv4 address or a bracketed IPv6 address; port 1 to 65535). */
export function hostPort(): Parser<string> {
  const base = str({
    pattern: HOST_PORT,
    accepted: 'host:port (a host name, IPv4 or [IPv6] address and a port from 1 to 65535)',
  });
  const check = (v: unknown): string => {
    const s = base.check(v);
    const port = Number(HOST_PORT.exec(s)?.[1]);
    if (port < 1 || port > 65535) return base.check('');
    return s;
  };
  return { accepted: base.accepted, check, parse: (raw) => check(raw.trim()) };
}

/** A Sentinel master name: what `sentinel monitor <name>` accepts. */
export function sentinelMasterName(): Parser<string> {
  return str({ pattern: /^[A-Za-z0-9._-]{1,64}$/, accepted: '1 to 64 letters, digits, . _ or -' });
}

/** The four topology variables of one store, `prefix` being `KVSTORE` or `RATELIMIT_STORAGE`. */
function topologyVariables(prefix: 'KVSTORE' | 'RATELIMIT_STORAGE', path: string, what: string): VariableSpec[] {
  return [
    variable(
      `${prefix}_MODE`,
      `${path}.mode`,
      oneOf(KVSTORE_MODES),
      `How ${what} is reached: standalone (one server), cluster (Redis Cluster; the URL is a seed node) or sentinel (the URL and ${prefix}_NODES are sentinels)`,
    ),
    variable(
      `${prefix}_NODES`,
      `${path}.nodes`,
      list(hostPort()),
      `More host:port addresses of ${what}: cluster seed nodes, or sentinels; not in standalone mode`,
    ),
    variable(
      `${prefix}_SENTINEL_MASTER`,
      `${path}.sentinelMaster`,
      sentinelMasterName(),
      `Master name the sentinels of ${what} monitor (sentinel mode only, required there)`,
    ),
    variable(
      `${prefix}_SENTINEL_PASSWORD`,
      `${path}.sentinelPassword`,
      str(),
      `Password of the sentinels of ${what} (the master's stays in the URL or password setting)`,
      { secret: true },
    ),
  ];
}

/** `KVSTORE_MODE`, `KVSTORE_NODES`, `KVSTORE_SENTINEL_MASTER`, `KVSTORE_SENTINEL_PASSWORD`. */
export const KVSTORE_TOPOLOGY_VARIABLES: readonly VariableSpec[] = topologyVariables(
  'KVSTORE',
  'kvstore.topology',
  'the key-value store (KVSTORE_URL)',
);

/** The same four for the rate limiter's own store (`RATELIMIT_STORAGE_URL`). */
export const RATE_LIMIT_TOPOLOGY_VARIABLES: readonly VariableSpec[] = topologyVariables(
  'RATELIMIT_STORAGE',
  'rateLimit.storageTopology',
  'the rate limiter’s own store (RATELIMIT_STORAGE_URL)',
);

/**
 * Rules of one store's topology: nodes and a master name only where the mode uses them, a master
 * name in sentinel mode, a URL in any mode other than the default, database 0 on a cluster.
 */
export function topologyIssues(
  prefix: 'KVSTORE' | 'RATELIMIT_STORAGE',
  url: string | undefined,
  t: StoreTopologySettings,
): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  const conflict = (variable: string, value: string, message: string) =>
    issues.push({ code: 'ERR_SETTINGS_CONFLICT', variable, value, message });
  const urlVar = `${prefix}_URL`;
  if (t.mode !== 'standalone' && !url) {
    conflict(
      `${prefix}_MODE`,
      t.mode,
      `${prefix}_MODE=${t.mode} needs ${urlVar} (a seed node in cluster mode, a sentinel in sentinel mode); accepted: set ${urlVar}, or leave ${prefix}_MODE at standalone`,
    );
  }
  if (t.mode === 'standalone' && t.nodes.length) {
    conflict(
      `${prefix}_NODES`,
      JSON.stringify(t.nodes.join(',')),
      `${prefix}_NODES=${JSON.stringify(t.nodes.join(','))} is only used with ${prefix}_MODE=cluster (seed nodes) or sentinel (sentinels); accepted: set ${prefix}_MODE, or unset ${prefix}_NODES`,
    );
  }
  if (t.mode === 'sentinel' && !t.sentinelMaster) {
    conflict(
      `${prefix}_SENTINEL_MASTER`,
      '',
      `${prefix}_MODE=sentinel needs ${prefix}_SENTINEL_MASTER, the name the sentinels monitor the master under (sentinel monitor <name> …); accepted: 1 to 64 letters, digits, . _ or -`,
    );
  }
  if (t.mode !== 'sentinel' && (t.sentinelMaster || t.sentinelPassword)) {
    const v = t.sentinelMaster ? `${prefix}_SENTINEL_MASTER` : `${prefix}_SENTINEL_PASSWORD`;
    const shown = t.sentinelMaster ? JSON.stringify(t.sentinelMaster) : '<hidden>';
    conflict(
      v,
      shown,
      `${v}=${shown} is only used with ${prefix}_MODE=sentinel (now ${t.mode}); accepted: set ${prefix}_MODE=sentinel, or unset ${v}`,
    );
  }
  if (t.mode === 'cluster' && url) {
    const db = safePath(url);
    if (db && db !== '0') {
      conflict(
        urlVar,
        `database ${db}`,
        `${urlVar} selects database ${db}, but a Redis Cluster has database 0 only (${prefix}_MODE=cluster); accepted: a URL without a database path, or /0`,
      );
    }
  }
  return issues;
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname.replace(/^\//, '');
  } catch {
    return '';
  }
}
