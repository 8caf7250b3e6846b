import { PORTS } from './names';

/** Where the kvstore keeps its append-only file (the PersistentVolumeClaim's mount). */
export const KVSTORE_DATA_DIR = '/data';

/** Most memory Redis uses before it evicts keys with a TTL; below the container's 256Mi limit. */
export const KVSTORE_MAXMEMORY = '192mb';

/**
 * `redis.conf` of the kvstore: append-only persistence (fsync every second) as the one durable
 * format, and a memory ceiling under the container limit. When full, Redis evicts keys that have
 * a TTL (rate-limit state) before refusing writes, instead of being OOM-killed. `volatile-lru`, not
 * an `allkeys-*` policy: the content keys carry no TTL, so they are never evicted (the service
 * refuses to start on a policy that could evict them: service/kvstore/eviction-policy.ts), and
 * noeviction's only difference would be refusing rate-limit writes too. The password is not here:
 * the container passes it on stdin from the Secret.
 */
export function kvstoreConfig(): string {
  return [
    `port ${PORTS.kvstore}`,
    `dir ${KVSTORE_DATA_DIR}`,
    'appendonly yes',
    'appendfsync everysec',
    'save ""',
    `maxmemory ${KVSTORE_MAXMEMORY}`,
    'maxmemory-policy volatile-lru',
    '',
  ].join('\n');
}
