import type { KvstoreMode } from '../../../configs';

/** The content store's keys in Redis. */
export interface ContentKeys {
  /** Hash: item id → item JSON. */
  readonly items: string;
  /** Stream of change notices. */
  readonly changes: string;
  /** Marker that vanishes with the data. */
  readonly epoch: string;
  /** Sorted set: deleted item id → the deletion's stamp (ms), its tombstone (redis-scripts.ts). */
  readonly deleted: string;
  /** Sorted set: id deleted and then written again → the stamp of the deletion that write superseded. */
  readonly revived: string;
  /** Hash: item id → its vectors' record (binary: redis-vectors.ts), issue 41. */
  readonly vectors: string;
  /** Prefix of the claims of item versions being embedded (`<prefix>:vclaim:<id>:<fingerprint>`, each a key with a lease). */
  readonly vectorClaims: string;
}

/**
 * The content keys for `prefix` (`KVSTORE_KEY_PREFIX`). On a Redis Cluster every key carries one
 * hash tag, so the script that writes items and their change notice, and every other command,
 * stays in one slot (no CROSSSLOT): `{svc-ai-search:content}:items`. A prefix that already holds a
 * tag (`blog:{content}`) is used as it is. Standalone and Sentinel (one master holds every key)
 * keep today's untagged names, so existing deployments read their data unchanged.
 */
export function contentKeys(prefix: string, mode: KvstoreMode): ContentKeys {
  const base = mode === 'cluster' && !/\{[^}]+\}/.test(prefix) ? `{${prefix}}` : prefix;
  return {
    items: `${base}:items`,
    changes: `${base}:changes`,
    epoch: `${base}:epoch`,
    deleted: `${base}:deleted`,
    revived: `${base}:revived`,
    vectors: `${base}:vectors`,
    vectorClaims: `${base}:vclaim`,
  };
}
