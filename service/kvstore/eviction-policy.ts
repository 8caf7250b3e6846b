import { Cluster } from 'ioredis';
import type { RedisClient } from './client-factory';

/**
 * What a server's `maxmemory-policy` means for keys without a TTL (the content keys carry none:
 * redis-keys.ts, redis-content-store.ts): `none` when it never evicts them (`noeviction`, and every
 * `volatile-*` policy, which evicts only keys with a TTL: the rate limiter's); `evicts` when it may
 * (`allkeys-*`, and any policy this service does not know: the safe reading of a new name).
 */
export type PolicyEffect = 'none' | 'evicts';

/** The memory settings of one server (or the worst of a cluster's masters), as read. */
export interface MemoryPolicy {
  /** `maxmemory-policy`, or undefined when it could not be read. */
  readonly policy?: string;
  /** `maxmemory` in bytes (0: no limit), or undefined when it could not be read. */
  readonly maxmemory?: number;
  /**
   * How it was read: `config` (CONFIG GET), `info` (INFO memory, where CONFIG is refused, as
   * several managed Redis services do), undefined when neither answered.
   */
  readonly source?: 'config' | 'info';
  /** Why it could not be read (the servers' refusals), when it could not. */
  readonly error?: string;
  /**
   * True when it could not be read because the server refused both commands (an error reply);
   * false when one went unanswered (a timeout, a dropped connection): that reading says nothing.
   */
  readonly refused?: boolean;
  /** Which server it describes, for messages (`the kvstore`, `the cluster master 10.0.0.5:6379`). */
  readonly where: string;
}

/** The effect of `policy` on keys without a TTL (see `PolicyEffect`). */
export function policyEffect(policy: string): PolicyEffect {
  const p = policy.trim().toLowerCase();
  return p === 'noeviction' || p.startsWith('volatile-') ? 'none' : 'evicts';
}

/** The value of `field` in an INFO reply, or undefined. */
export function infoField(info: string, field: string): string | undefined {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info);
  return m ? m[1].trim() : undefined;
}

/** The message of a refused or failed command, for the record (a server's words: no credentials). */
function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** True for an error reply of the server (ERR unknown command, NOPERM), not a timeout or a lost connection. */
function isReply(e: unknown): boolean {
  return e instanceof Error && e.name === 'ReplyError';
}

/**
 * Reads `maxmemory-policy` and `maxmemory` of one server: CONFIG GET first; where CONFIG is
 * refused (renamed, an ACL without it, a managed service), the same values from INFO memory.
 * Never throws: a server that answers neither gives a record with `error` and no policy.
 */
export async function readMemoryPolicy(c: RedisClient, where: string): Promise<MemoryPolicy> {
  let configError: string;
  let configRefused = true;
  try {
    const flat = (await c.call('CONFIG', 'GET', 'maxmemory*')) as string[];
    const values = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) values.set(flat[i], flat[i + 1]);
    const policy = values.get('maxmemory-policy');
    if (policy !== undefined)
      return { policy, maxmemory: Number(values.get('maxmemory') ?? 0), source: 'config', where };
    configError = 'CONFIG GET maxmemory* did not list maxmemory-policy';
  } catch (e) {
    configError = reason(e);
    configRefused = isReply(e);
  }
  try {
    const info = await c.info('memory');
    const policy = infoField(info, 'maxmemory_policy');
    if (policy !== undefined)
      return { policy, maxmemory: Number(infoField(info, 'maxmemory') ?? 0), source: 'info', where };
    return { error: `CONFIG GET: ${configError}; INFO memory has no maxmemory_policy`, refused: configRefused, where };
  } catch (e) {
    return {
      error: `CONFIG GET: ${configError}; INFO memory: ${reason(e)}`,
      refused: configRefused && isReply(e),
      where,
    };
  }
}

/** The servers that hold keys: every master of a cluster, else the one server. */
function primaries(c: RedisClient): Array<{ node: RedisClient; where: string }> {
  if (c instanceof Cluster)
    return c.nodes('master').map((n) => ({ node: n, where: `the cluster master ${n.options.host}:${n.options.port}` }));
  return [{ node: c, where: 'the server' }];
}

/**
 * The memory policy of the store `c` reaches: of a cluster, the first master whose policy may
 * evict keys without a TTL, else the first that could not be read, else the first.
 */
export async function readStorePolicy(c: RedisClient): Promise<MemoryPolicy> {
  const read = await Promise.all(primaries(c).map(({ node, where }) => readMemoryPolicy(node, where)));
  if (!read.length) return { error: 'no master to ask', where: 'the cluster' };
  return (
    read.find((p) => p.policy !== undefined && policyEffect(p.policy) === 'evicts') ??
    read.find((p) => p.policy === undefined) ??
    read[0]
  );
}

/** `evicted_keys` of a store's masters, with which server processes counted them. */
export interface EvictionCount {
  /** The sum of `evicted_keys` (INFO stats) over the masters. */
  readonly total: number;
  /** Their `run_id`s (INFO server), joined: a change means another process counts from 0 (a restart, a failover). */
  readonly runIds: string;
}

/**
 * `evicted_keys` of INFO stats summed over the store's masters, with their run ids; undefined
 * when a master does not answer (then nothing is concluded from this reading).
 */
export async function readEvictedKeys(c: RedisClient): Promise<EvictionCount | undefined> {
  let total = 0;
  const runIds: string[] = [];
  for (const { node } of primaries(c)) {
    let stats: string;
    let server: string;
    try {
      [stats, server] = await Promise.all([node.info('stats'), node.info('server')]);
    } catch {
      return undefined;
    }
    const n = Number(infoField(stats, 'evicted_keys'));
    if (!Number.isFinite(n)) return undefined;
    total += n;
    runIds.push(infoField(server, 'run_id') ?? '');
  }
  return { total, runIds: runIds.sort().join(',') };
}

/** Raised at startup when the content store's kvstore may evict the content keys and the risk is not accepted. */
export class KvstoreEvictionError extends Error {
  /** Stable code for tests and logs. */
  readonly code = 'ERR_KVSTORE_EVICTION';
  constructor(message: string) {
    super(message);
    this.name = 'KvstoreEvictionError';
  }
}

/** The setting that accepts the risk of an evicting policy for content. */
export const ACCEPT_EVICTION_VARIABLE = 'KVSTORE_ACCEPT_EVICTION';

/** Human form of `maxmemory`: `20mb` style, or `0 (no limit)`. */
function memoryText(bytes: number | undefined): string {
  if (bytes === undefined) return 'unknown';
  if (bytes === 0) return '0 (no limit yet: one set later with CONFIG SET applies this policy at once)';
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb}mb` : `${bytes} bytes`;
}

/**
 * Why content must not go into a store with `p`'s policy: names the setting, its value, where
 * it was read, and the fixes. For the startup error and the log.
 */
export function evictionProblem(p: MemoryPolicy): string {
  return (
    `the kvstore's maxmemory-policy is ${p.policy} (maxmemory ${memoryText(p.maxmemory)}, read from ${p.where} by ${p.source === 'info' ? 'INFO memory' : 'CONFIG GET'}): ` +
    'Redis evicts whole keys when it is full, so it may drop the content keys (the item hash holds every item) and acknowledged items are lost once no replica holds them. ' +
    `Accepted: maxmemory-policy noeviction (writes are refused with 503 when full, nothing is lost), or a volatile-* policy (only keys with a TTL are evicted: the content keys have none); ` +
    `or set ${ACCEPT_EVICTION_VARIABLE}=true to start anyway and accept the risk (evictions are then watched, reported in /health and written back while a replica holds the items)`
  );
}
