import { LRUCache } from 'lru-cache';
import type { CacheStats } from '../metrics/service-metrics';

/** Options of `ResultCache`. */
export interface ResultCacheOptions {
  /** Most entries (`SEARCH_CACHE_SIZE`). */
  readonly maxSize: number;
  /** Lifetime of an entry, seconds; 0 = until evicted or invalidated (`SEARCH_CACHE_TTL_SECONDS`). */
  readonly ttlSeconds: number;
  /** Time source of the TTL, milliseconds (tests move it by hand). @default performance.now */
  readonly now?: () => number;
}

/**
 * An LRU cache of search responses keyed by the normalized query. Every content write clears
 * it, so a cached answer is never older than the content. Its occupancy feeds the three cache
 * gauges.
 */
export class ResultCache<V extends object> implements CacheStats {
  private readonly lru: LRUCache<string, V>;

  constructor(private readonly opts: ResultCacheOptions) {
    const now = opts.now;
    this.lru = new LRUCache<string, V>({
      max: opts.maxSize,
      ...(opts.ttlSeconds > 0
        ? { ttl: opts.ttlSeconds * 1000, ttlResolution: 0, ttlAutopurge: false, updateAgeOnGet: false }
        : {}),
      ...(now ? { perf: { now } } : {}),
    });
  }

  get(key: string): V | undefined {
    return this.lru.get(key);
  }

  set(key: string, value: V): void {
    this.lru.set(key, value);
  }

  /** Drops every entry (after a write). */
  clear(): void {
    this.lru.clear();
  }

  /** Live entries now (expired ones are purged first). */
  size(): number {
    this.lru.purgeStale();
    return this.lru.size;
  }

  maxSize(): number {
    return this.opts.maxSize;
  }
}
