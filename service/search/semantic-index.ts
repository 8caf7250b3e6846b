import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ItemVectors, SemanticStatus, VectorFeed } from '../embeddings';
import { VectorIndex, type VectorHit, type VectorIndexOptions, type VectorStore } from './vectors';

/** Options of `SemanticIndex`. */
export interface SemanticIndexOptions {
  /** Where the items' vectors come from (the content side, issue 41). */
  readonly feed: VectorFeed;
  /** Numbers a vector (`EMBEDDINGS_DIMENSIONS`). */
  readonly dims: number;
  /** What the vectors are made with (`model/dimensions`): a persisted file of another key is rebuilt. */
  readonly key: string;
  /** Where the vector index is persisted (beside the search segment). @default none: built at every start */
  readonly store?: VectorStore;
  /** Options of the vector index, over the dimensions. */
  readonly vectors?: Omit<VectorIndexOptions, 'dims'>;
  readonly logger?: Logger;
}

/** Whether the persisted vector index was used at the start. */
export type VectorOrigin = 'file' | 'rebuilt' | 'built';

/**
 * The search side of search by meaning (issue 41): a `VectorIndex` kept equal to what the
 * `VectorFeed` holds (read whole at `start`, then each change as it is told), persisted through a
 * `VectorStore` when one is given (loaded at the start only when it was made with the same key
 * from the same items' content versions, else rebuilt, never served stale).
 */
export class SemanticIndex {
  private index: VectorIndex;
  private unsubscribe?: () => void;
  private queryFailedAt = 0;
  private changes = 0;
  private started = false;
  /** Where the index served came from; undefined before `start` ends. */
  origin?: VectorOrigin;

  constructor(private readonly opts: SemanticIndexOptions) {
    this.index = new VectorIndex(this.indexOptions());
  }

  /** The vector index's options: a failed graph worker is logged (queries go on, exactly). */
  private indexOptions(): VectorIndexOptions {
    return {
      ...this.opts.vectors,
      dims: this.opts.dims,
      onGraphFailure: (reason) =>
        this.opts.logger?.error(
          { reason },
          `vector graph lost (${reason}): search by meaning answers by exact scan, slower, until a restart rebuilds it`,
        ),
    };
  }

  /** Reads the feed's current vectors (or the persisted index made from them), then follows its changes. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    // Changes told while the current vectors are read apply after them, in their order.
    const queued: Array<() => void> = [];
    let live = false;
    this.unsubscribe = this.opts.feed.subscribe({
      put: (v) => (live ? this.put(v) : queued.push(() => this.put(v))),
      remove: (ids) => (live ? this.drop(ids) : queued.push(() => this.drop(ids))),
    });
    const current = [...this.opts.feed.current()];
    const options = this.indexOptions();
    const build = () => {
      const index = new VectorIndex(options);
      for (const v of current) index.add(v.id, v.vectors, v.fingerprint);
      return index;
    };
    const previous = this.index;
    // Without vectors there is nothing to load (nor a file worth a warning).
    if (this.opts.store && current.length > 0) {
      const loaded = await this.opts.store.load({ key: this.opts.key, content: contentKey(current) }, options, build);
      this.index = loaded.index;
      this.origin = loaded.from;
    } else {
      this.index = build();
      this.origin = 'built';
    }
    previous.close();
    live = true;
    this.changes += 1;
    for (const apply of queued) apply();
  }

  private put(vectors: readonly ItemVectors[]): void {
    this.changes += 1;
    for (const v of vectors) {
      try {
        this.index.add(v.id, v.vectors, v.fingerprint);
      } catch (e) {
        // A vector of other dimensions (a model changed under a running service) is left out, not fatal.
        this.index.remove([v.id]);
        this.opts.logger?.warn({ id: v.id, err: (e as Error).message }, 'vectors not indexed');
      }
    }
  }

  private drop(ids: readonly string[]): void {
    this.changes += 1;
    this.index.remove(ids);
  }

  /** Counts the changes of the vectors served: a cached semantic answer is of one generation. */
  get generation(): number {
    return this.changes;
  }

  /** Items with vectors. */
  get size(): number {
    return this.index.size;
  }

  /** Whether any item has vectors (hybrid search is the default then). */
  get hasVectors(): boolean {
    return this.index.size > 0;
  }

  /** The `k` items nearest `query`, best first (cosine similarity of each item's best passage). */
  nearest(query: ArrayLike<number>, k: number): Promise<VectorHit[]> {
    return this.index.search(query, k);
  }

  /** Told by the search when embedding a query failed (`degraded` until one succeeds). */
  queryFailed(at = Date.now()): void {
    this.queryFailedAt = at;
  }

  /** Told by the search when embedding a query succeeded. */
  queryEmbedded(): void {
    this.queryFailedAt = 0;
  }

  /**
   * `degraded` when the feed says so, the last query embedding failed or the vector graph's worker
   * thread failed; `off` with neither vectors nor embedder; else `ok`.
   */
  status(): SemanticStatus {
    const feed = this.opts.feed.status();
    if (feed === 'degraded' || this.queryFailedAt > 0 || this.index.graphFailure) return 'degraded';
    if (feed === 'off' && !this.hasVectors) return 'off';
    return 'ok';
  }

  /** Items whose vectors are not computed yet (`VectorFeed.pending`). */
  pending(): number {
    return this.opts.feed.pending();
  }

  /** Persists the index (when a store is given): on a graceful stop. */
  async persist(): Promise<void> {
    if (!this.opts.store || !this.started || !this.hasVectors) return;
    // No wait for the graph to take every row: the file records the rows it holds, and the next
    // start adds the others to it in the background.
    const snap = this.index.snapshot();
    const items: Array<{ id: string; fingerprint: number }> = [];
    snap.ids.forEach((id, slot) => {
      if (id !== null) items.push({ id, fingerprint: snap.fingerprints[slot] });
    });
    await this.opts.store.save(this.index, { key: this.opts.key, content: contentKey(items) });
  }

  /** Stops following the feed and frees the index (its graph's worker thread ends). */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.index.close();
  }
}

/**
 * The content a vector index was made from, as a persisted file records it: a hash of its items'
 * ids and content fingerprints, in id order (so the feed's order does not matter).
 */
export function contentKey(items: Iterable<{ readonly id: string; readonly fingerprint: number }>): string {
  const pairs = [...items].map((v) => `${v.id}\u0000${v.fingerprint >>> 0}`).sort();
  const h = createHash('sha256');
  for (const p of pairs) h.update(p).update('\u0001');
  return h.digest('hex').slice(0, 32);
}
