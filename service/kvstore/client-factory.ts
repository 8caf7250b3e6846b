import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { KvstoreMode, StoreTopologySettings } from '../../configs';

/** A client of any mode: one server or a sentinel-managed master (`Redis`), or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Where one store is and how to reach it, with the variable names its messages use. */
export interface StoreTarget {
  /** `redis://` or `rediss://` URL: the server, a cluster seed node, or a sentinel. */
  readonly url: string;
  /** Password overriding the URL's (`KVSTORE_PASSWORD`). */
  readonly password?: string;
  readonly topology: StoreTopologySettings;
  /** Prefix of the variables that configure this store: `KVSTORE` or `RATELIMIT_STORAGE`. */
  readonly variablePrefix: 'KVSTORE' | 'RATELIMIT_STORAGE';
}

/** Host and port of a `host:port` setting (IPv6 in brackets). */
export function parseHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port: Number(s.slice(i + 1)) };
}

/** What a URL says besides the address: TLS, user, password, database. */
interface UrlParts {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly username?: string;
  readonly password?: string;
  readonly db: number;
}

function urlParts(url: string, passwordOverride: string | undefined): UrlParts {
  const u = new URL(url);
  const password = passwordOverride ?? (u.password ? decodeURIComponent(u.password) : undefined);
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : 6379,
    tls: u.protocol === 'rediss:',
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password,
    db: Number(u.pathname.replace(/^\//, '') || 0),
  };
}

/**
 * Builds the ioredis client of a store, by mode, from the connection options every mode shares
 * (`base`: no offline queue, command timeout, reconnect backoff…):
 *
 * - `standalone`: `new Redis(url)`, today's client;
 * - `cluster`: `new Redis.Cluster([url's node, ...nodes])`, with user, password and TLS of the
 *   URL applied to every node, and the same reconnect backoff for the cluster as a whole;
 * - `sentinel`: `new Redis({ sentinels: [url's node, ...nodes], name })`: the URL's password,
 *   database and TLS are the master's; `…_SENTINEL_PASSWORD` is the sentinels' own; the client
 *   asks the sentinels for the master on every (re)connect, so a promoted replica is followed.
 */
export function createRedisClient(target: StoreTarget, base: RedisOptions): RedisClient {
  const p = urlParts(target.url, target.password);
  const tls = p.tls ? { tls: {} } : {};
  const auth = { ...(p.username ? { username: p.username } : {}), ...(p.password ? { password: p.password } : {}) };
  const t = target.topology;
  if (t.mode === 'cluster') {
    const { retryStrategy, enableOfflineQueue, lazyConnect, ...nodeOptions } = base;
    const options: ClusterOptions = {
      redisOptions: { ...nodeOptions, ...auth, ...tls },
      clusterRetryStrategy: retryStrategy ?? undefined,
      enableOfflineQueue,
      lazyConnect,
      slotsRefreshTimeout: base.connectTimeout,
      // A MOVED while slots move is followed at once; a CLUSTERDOWN is retried shortly, then fails.
      retryDelayOnClusterDown: 100,
      maxRedirections: 16,
      // The client steps of one turn's rate-limit decisions go to each node in one write.
      enableAutoPipelining: true,
    };
    return new Cluster([{ host: p.host, port: p.port }, ...t.nodes.map(parseHostPort)], options);
  }
  if (t.mode === 'sentinel') {
    return new Redis({
      ...base,
      ...auth,
      ...tls,
      db: p.db,
      sentinels: [{ host: p.host, port: p.port }, ...t.nodes.map(parseHostPort)],
      name: t.sentinelMaster,
      ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
      ...(p.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      sentinelRetryStrategy: (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
      // Subscribes to the sentinels' +switch-master: a failover is followed at once, not at the next error.
      failoverDetector: true,
    });
  }
  const u = new URL(target.url);
  if (target.password) u.password = '';
  return new Redis(target.password ? u.toString() : target.url, {
    ...base,
    ...(target.password ? { password: target.password } : {}),
  });
}

/** What a server says it is (`INFO server` → `redis_mode`). */
export async function detectMode(target: StoreTarget, connectTimeoutMs: number): Promise<KvstoreMode> {
  const p = urlParts(target.url, target.password);
  const sentinel = target.topology.mode === 'sentinel';
  const probe = new Redis({
    host: p.host,
    port: p.port,
    ...(p.tls ? { tls: {} } : {}),
    // A sentinel has its own password; a data node the URL's.
    ...(sentinel
      ? target.topology.sentinelPassword
        ? { password: target.topology.sentinelPassword }
        : {}
      : { username: p.username, password: p.password }),
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    commandTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    const info = String(await probe.call('INFO', 'server'));
    const mode = /redis_mode:(\w+)/.exec(info)?.[1];
    return mode === 'cluster' || mode === 'sentinel' ? mode : 'standalone';
  } finally {
    probe.disconnect();
  }
}

/** Raised at startup when the store answers in another mode than configured. */
export class KvstoreModeError extends Error {
  /** Stable code for tests and logs. */
  readonly code = 'ERR_KVSTORE_MODE_MISMATCH';
  constructor(message: string) {
    super(message);
    this.name = 'KvstoreModeError';
  }
}

/** The startup error for a store that answers as `actual` while configured as `target.topology.mode`. */
export function modeMismatch(target: StoreTarget, actual: KvstoreMode): KvstoreModeError {
  const v = target.variablePrefix;
  const configured = target.topology.mode;
  const shown = (() => {
    const u = new URL(target.url);
    if (u.password) u.password = '***';
    return u.toString();
  })();
  const what = {
    standalone: 'a standalone Redis server',
    cluster: 'a Redis Cluster node',
    sentinel: 'a Redis Sentinel',
  }[actual];
  const fix =
    actual === 'sentinel'
      ? `set ${v}_MODE=sentinel and ${v}_SENTINEL_MASTER to the master's name`
      : `set ${v}_MODE=${actual}`;
  return new KvstoreModeError(
    `${v}_URL=${shown} answers as ${what} (redis_mode:${actual}) but ${v}_MODE=${configured}; ${fix}`,
  );
}
