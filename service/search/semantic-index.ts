import { createHash, hash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ItemVectors, SemanticStatus, VectorFeed } from '../embeddings';
import { yieldToLoop } from '../lib/yield-to-loop';
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
  /**
   * Longest wait of `start` for the persisted index (or the build) before it returns and lets the
   * service be ready, ms: the rest loads in the background (`loading`), semantic and hybrid
   * queries answering by keyword meanwhile (the service: `SEMANTIC_START_WAIT_MS`). @default no
   * limit: `start` returns once the index is loaded
   */
  readonly startWaitMs?: number;
}

/** `SemanticStatus`, and `loading` while the vector index is read or built at the start. */
export type SemanticIndexStatus = SemanticStatus | 'loading';

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
  private loadingNow = false;
  private closed = false;
  // Items the feed held at the start: vectors exist while the index that holds them loads.
  private expected = 0;
  private loadedIndex: Promise<void> = Promise.resolve();
  /** Where the index served came from; undefined before the load at the start ends. */
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

  /**
   * Reads the feed's current vectors (or the persisted index made from them), then follows its
   * changes. Returns when that is done or after `startWaitMs`, whichever comes first: the rest
   * goes on in the background (`loading`, `loaded()`).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.loadingNow = true;
    const load = this.load()
      .catch((e: Error) => {
        // Not fatal: the index stays as it is (empty, exact), the changes that follow fill it.
        this.opts.logger?.error({ err: e.message }, 'vector index not loaded: search by meaning starts empty');
      })
      .finally(() => {
        this.loadingNow = false;
      });
    this.loadedIndex = load;
    const waitMs = this.opts.startWaitMs;
    let timer: NodeJS.Timeout | undefined;
    if (waitMs === undefined) await load;
    else await Promise.race([load, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    if (this.loadingNow)
      this.opts.logger?.info(
        { items: this.expected },
        'vector index still loading: semantic and hybrid queries answer by keyword until it is loaded',
      );
  }

  /** Settles once the load at the start has ended. */
  loaded(): Promise<void> {
    return this.loadedIndex;
  }

  /** Whether the vector index is still being read or built at the start. */
  get loading(): boolean {
    return this.loadingNow;
  }

  private async load(): Promise<void> {
    // Changes told while the current vectors are read apply after them, in their order.
    const queued: Array<() => void> = [];
    let live = false;
    this.unsubscribe = this.opts.feed.subscribe({
      put: (v) => (live ? this.put(v) : queued.push(() => this.put(v))),
      remove: (ids) => (live ? this.drop(ids) : queued.push(() => this.drop(ids))),
    });
    // An array the feed made for this call is taken as it is: a copy of 1M items was a turn of its own.
    const given = this.opts.feed.current();
    const current = Array.isArray(given) ? (given as readonly ItemVectors[]) : [...given];
    this.expected = current.length;
    const options = this.indexOptions();
    // A turn of the loop every 1,000 items: adding (normalising) 1M vectors at once held it for seconds.
    const build = async () => {
      const index = new VectorIndex(options);
      let n = 0;
      for (const v of current) {
        index.add(v.id, v.vectors, v.fingerprint);
        if (++n % 1000 === 0) await yieldToLoop();
      }
      return index;
    };
    const previous = this.index;
    // Without vectors there is nothing to load (nor a file worth a warning).
    if (this.opts.store && current.length > 0) {
      const content = await contentKeyInSteps(current, yieldToLoop);
      // The feed's items: the index keeps their id strings instead of making 1M more from the file.
      const loaded = await this.opts.store.load({ key: this.opts.key, content }, options, build, current);
      this.index = loaded.index;
      this.origin = loaded.from;
    } else {
      this.index = await build();
      this.origin = 'built';
    }
    previous.close();
    // Closed while loading (a stop during the start): the loaded index's worker ends too.
    if (this.closed) this.index.close();
    live = true;
    this.changes += 1;
    for (const apply of queued) apply();
    if (this.expected > 0) this.opts.logger?.info({ items: this.index.size, from: this.origin }, 'vector index loaded');
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

  /** Whether any item has vectors (hybrid search is the default then), counting those still loading. */
  get hasVectors(): boolean {
    return this.index.size > 0 || (this.loadingNow && this.expected > 0);
  }

  /**
   * The `k` items nearest `query`, best first (cosine similarity of each item's best passage); waits
   * for the load at the start (the search asks `loading` first and answers by keyword meanwhile).
   */
  async nearest(query: ArrayLike<number>, k: number): Promise<VectorHit[]> {
    await this.loadedIndex;
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
   * thread failed; `loading` while the index is read or built at the start; `off` with neither
   * vectors nor embedder; else `ok`.
   */
  status(): SemanticIndexStatus {
    const feed = this.opts.feed.status();
    if (feed === 'degraded' || this.queryFailedAt > 0 || this.index.graphFailure) return 'degraded';
    if (this.loadingNow) return 'loading';
    if (feed === 'off' && !this.hasVectors) return 'off';
    return 'ok';
  }

  /** Items whose vectors are not computed yet (`VectorFeed.pending`). */
  pending(): number {
    return this.opts.feed.pending();
  }

  /** Persists the index (when a store is given): on a graceful stop. */
  async persist(): Promise<void> {
    if (!this.opts.store || !this.started || this.loadingNow || this.index.size === 0) return;
    // No wait for the graph to take every row: the file records the rows it holds, and the next
    // start adds the others to it in the background.
    const snap = this.index.snapshot();
    const items: Array<{ id: string; fingerprint: number }> = [];
    snap.ids.forEach((id, slot) => {
      if (id !== null) items.push({ id, fingerprint: snap.fingerprints[slot] });
    });
    await this.opts.store.save(this.index, {
      key: this.opts.key,
      content: await contentKeyInSteps(items, yieldToLoop),
    });
  }

  /** Stops following the feed and frees the index (its graph's worker thread ends). */
  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.index.close();
  }
}

/** Items a step of `contentKeyInSteps` hashes (~13 ms of CPU: 1M items took 3.2 s at load 15). */
const KEY_STEP_ITEMS = 4000;

/**
 * The content a vector index was made from, as a persisted file records it: a hash of its items'
 * ids and content fingerprints that does not depend on their order (each pair's SHA-256 added,
 * 32 bits at a time, into eight sums, then the sums and the count hashed), so it needs no sort:
 * sorting and hashing 1M ids in one turn took 1.8 s of CPU (the start then computes it in steps).
 */
export function contentKey(items: Iterable<{ readonly id: string; readonly fingerprint: number }>): string {
  const sums = new Uint32Array(8);
  let n = 0;
  for (const v of items) n = addPair(sums, n, v);
  return keyOfSums(sums, n);
}

/** `contentKey`, awaiting `pause` every `KEY_STEP_ITEMS` items (a start at 1M items stays responsive). */
export async function contentKeyInSteps(
  items: Iterable<{ readonly id: string; readonly fingerprint: number }>,
  pause: () => Promise<void>,
): Promise<string> {
  const sums = new Uint32Array(8);
  let n = 0;
  for (const v of items) if ((n = addPair(sums, n, v)) % KEY_STEP_ITEMS === 0) await pause();
  return keyOfSums(sums, n);
}

function addPair(sums: Uint32Array, n: number, v: { readonly id: string; readonly fingerprint: number }): number {
  // The digest as a `binary` (latin1) string, a character a byte, read 32 bits little-endian at a
  // time: a `Buffer` a pair was 1M buffers for the collector at a 1M start, and 2-3× the CPU (1.8 s).
  const d = hash('sha256', `${v.id}\u0000${v.fingerprint >>> 0}`, 'binary');
  for (let i = 0, c = 0; i < 8; i++, c += 4) {
    const lane =
      d.charCodeAt(c) | (d.charCodeAt(c + 1) << 8) | (d.charCodeAt(c + 2) << 16) | (d.charCodeAt(c + 3) << 24);
    sums[i] = (sums[i] + (lane >>> 0)) >>> 0;
  }
  return n + 1;
}

const keyOfSums = (sums: Uint32Array, n: number): string =>
  createHash('sha256').update(Buffer.from(sums.buffer)).update(String(n)).digest('hex').slice(0, 32);
