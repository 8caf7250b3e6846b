import { LRUCache } from 'lru-cache';
import type { EmbedOptions, Embedder } from './types';

/** The key of a query: its text with whitespace runs made one space and the ends trimmed. */
export function queryKey(query: string): string {
  return query.replace(/\s+/g, ' ').trim();
}

/**
 * Query vectors by query text, bounded (LRU, `EMBEDDINGS_QUERY_CACHE_SIZE` entries of one vector
 * each): a repeated query costs no provider call, and the same query asked again while its call
 * is under way waits for that call instead of making another. A failed call is not kept. The
 * cache belongs to one embedder (one model and dimensions); a vector kept is never changed.
 */
export class QueryEmbeddingCache {
  private readonly lru?: LRUCache<string, Float32Array>;
  private readonly pending = new Map<string, Promise<Float32Array>>();

  constructor(
    private readonly embedder: Embedder,
    /** Most vectors kept; 0 keeps none (calls under way are still shared). */
    readonly maxSize: number,
  ) {
    if (maxSize > 0) this.lru = new LRUCache<string, Float32Array>({ max: maxSize });
  }

  /** The vector of `query` (not blank), from the cache or one provider call. */
  async embedQuery(query: string, options: EmbedOptions = {}): Promise<Float32Array> {
    const key = queryKey(query);
    if (!key) throw new RangeError('a blank query cannot be embedded');
    const kept = this.lru?.get(key);
    if (kept) return kept;
    let call = this.pending.get(key);
    if (!call) {
      call = this.embedder.embed([key], options).then((r) => r.vectors[0]);
      this.pending.set(key, call);
      const settle = () => this.pending.delete(key);
      call.then((v) => {
        this.lru?.set(key, v);
        settle();
      }, settle);
    }
    return call;
  }

  /** Vectors kept now. */
  get size(): number {
    return this.lru?.size ?? 0;
  }
}
