import { availableParallelism } from 'node:os';
import { TopK } from './exact-scan';
import { GraphWorker } from './graph-worker';
import { DEFAULT_EXPANSION_SEARCH, graphKeyOf, type GraphOptions } from './hnsw-graph';
import { BLOCK_ROWS, RowBlocks } from './row-blocks';
import { arrayChunks, ChunkedList, typedChunks } from '../../lib/chunked-list';
import { ShardedMap } from '../../lib/sharded-map';
import { stepper } from '../../lib/yield-to-loop';

/**
 * Nearest neighbours by meaning: items with one or more passage vectors, searched by cosine
 * similarity, an item scoring as its best passage. Vectors are normalised when added and kept
 * in shared blocks of rows (row-blocks.ts: the source of every exact answer, of the persisted file
 * and of a rebuild); from `exactBelow` live passage vectors on, a usearch HNSW graph
 * (bench/vectors/run.ts chose it, BENCHMARKS.md) answers unfiltered and mildly filtered queries.
 * The graph lives in a worker thread that owns it (graph-worker.ts, hnsw-worker.ts): it reads the
 * passage vectors from the same blocks (messages name rows, never copy them) and adds them, so the
 * library's adds and the capacity doublings inside them, its searches, saves and loads never run
 * on the event loop; searches are therefore asynchronous. The rows not
 * yet in the graph are scanned exactly at each query, so an item is found from the moment it is
 * added. A removed item's rows are marked dead at once and never returned, whatever the graph
 * still holds. When the worker fails or dies, every query is an exact scan from then on, and
 * `onGraphFailure` is told why (the service logs it and reports search by meaning degraded).
 */

/** Options of `VectorIndex`. */
export interface VectorIndexOptions {
  /** Numbers a vector. */
  readonly dims: number;
  /**
   * Below this many live passage vectors a query is an exact scan (exact answers for under a
   * millisecond: 2,000 vectors of 384 dimensions take ~0.6 ms), and no graph is built. @default 2000
   */
  readonly exactBelow?: number;
  /**
   * A filter given as a set of accepted ids whose items hold at most this many passage vectors is
   * answered by an exact scan of those alone (~3 ms at 384 dimensions), instead of searching the
   * graph for enough accepted neighbours. @default 10000
   */
  readonly exactFilteredBelow?: number;
  /**
   * Neighbours a filtered graph search may fetch before it gives up and scans the accepted
   * items exactly (a filter that rejects nearly everything). @default 4096
   */
  readonly maxFetch?: number;
  readonly graph?: GraphOptions;
  /** Length of one slice of graph building in the worker (a search waits for one at most), ms. @default 10 */
  readonly sliceMs?: number;
  /** Threads one slice of graph building uses. @default the machine's cores, at most 4 */
  readonly threads?: number;
  /** Told why, once, when the graph's worker thread fails or dies (queries are exact from then on). */
  readonly onGraphFailure?: (reason: string) => void;
}

/** A vector that cannot be indexed, and why. */
export class VectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorError';
  }
}

/** One item found. */
export interface VectorHit {
  readonly id: string;
  /** Cosine similarity of its best passage with the query, −1..1. */
  readonly score: number;
}

/** Which items a search may return: a predicate on the id, or the set of accepted ids. */
export type Accept = ((id: string) => boolean) | ReadonlySet<string>;

/** The state of an index, as persisted (vector-file.ts) and restored. */
export interface VectorSnapshot {
  readonly dims: number;
  /** Item id by slot; `null` for a slot whose item was removed. */
  readonly ids: ReadonlyArray<string | null>;
  /** Fingerprint of each slot's item as added (0 when none was given). */
  readonly fingerprints: Uint32Array;
  /** First row and number of rows of each slot. */
  readonly first: Int32Array;
  readonly count: Int32Array;
  /** Slot of each row, −1 for a dead row. */
  readonly rowSlot: Int32Array;
  /** Rows × dims, normalised, in consecutive parts (the index's blocks, or one array read from a file). */
  readonly vectors: readonly Float32Array[];
}

/**
 * Ids read in slot order, `each(id, slot)`, awaiting what `step` returns between parts: a file's
 * ids not parsed yet (vector-file.ts's `IdLines`; declared here so that this file imports nothing
 * of the file's).
 */
export interface IdReader {
  read(each: (id: string | null, slot: number) => void, step: () => Promise<void> | undefined): Promise<void>;
}

/** A `VectorSnapshot` as read back from a file: its ids maybe not parsed yet (vector-file.ts). */
export interface StoredSnapshot extends Omit<VectorSnapshot, 'ids'> {
  readonly ids: VectorSnapshot['ids'] | IdReader;
}

const int32s = typedChunks((n) => new Int32Array(n));
const uint32s = typedChunks((n) => new Uint32Array(n));

/** Rows sent to the graph's worker ahead of what it has taken (a chunk is at most a block). */
const AHEAD_ROWS = 2 * BLOCK_ROWS;

/**
 * Items `restore` puts in its id map between two looks at its step's budget (`stepper`): 16,384 a
 * turn held the loop for 44-48 ms of CPU at a 1M restart, the code not yet optimised.
 */
const RESTORE_STEP_ITEMS = 256;

/** See the file's comment. */
export class VectorIndex {
  readonly dims: number;
  private readonly exactBelow: number;
  private readonly exactFilteredBelow: number;
  private readonly maxFetch: number;
  private readonly sliceMs: number;
  private readonly threads: number;
  private readonly graphOptions: GraphOptions;
  /**
   * Candidates a graph search uses (HNSW's ef; `GraphOptions.expansionSearch`, the graph's default
   * when undefined). It may change between searches: the bench compares settings on one graph.
   */
  expansionSearch: number | undefined;

  // Rows in shared blocks of BLOCK_ROWS (row-blocks.ts), which the graph's worker reads too: adding
  // never copies the rows already held (a doubling array did, 192 ms of CPU in one turn at 16k →
  // 32k rows of 384 numbers), nor sends copies of them to the worker.
  private blocks: RowBlocks;
  // The per-row and per-item numbers and the ids in chunks (lib/chunked-list.ts): four typed arrays
  // doubling at 524,288 items took ~40 ms of CPU in one turn, faulting in the new arrays' pages, and
  // a JS array's growth copied 869,461 ids in one turn, 35 ms.
  private rowSlot = new ChunkedList(int32s);
  private ids = new ChunkedList(arrayChunks<string | null>());
  // Sharded: one Map's doubling at 524,288 ids took 233 ms of CPU in one turn (lib/sharded-map.ts).
  private slots = new ShardedMap<number>();
  private first = new ChunkedList(int32s);
  private count = new ChunkedList(int32s);
  private fps = new ChunkedList(uint32s);
  private liveRows = 0;

  private graph: GraphWorker | undefined;
  private pumpQueued = false;
  private closed = false;
  private readonly onGraphFailure: (reason: string) => void;

  constructor(opts: VectorIndexOptions) {
    if (!Number.isInteger(opts.dims) || opts.dims < 1)
      throw new VectorError(`dims must be a positive integer, got ${opts.dims}`);
    this.dims = opts.dims;
    this.exactBelow = opts.exactBelow ?? 2000;
    this.exactFilteredBelow = opts.exactFilteredBelow ?? 10_000;
    this.maxFetch = opts.maxFetch ?? 4096;
    this.sliceMs = opts.sliceMs ?? 10;
    this.threads = opts.threads ?? Math.min(4, availableParallelism());
    this.graphOptions = opts.graph ?? {};
    this.expansionSearch = this.graphOptions.expansionSearch;
    this.onGraphFailure = opts.onGraphFailure ?? (() => undefined);
    this.blocks = new RowBlocks(this.dims);
  }

  /** Rows held, live and dead. */
  private get rows(): number {
    return this.blocks.rows;
  }

  /** Items held. */
  get size(): number {
    return this.slots.size;
  }

  /** Live passage vectors held. */
  get vectorCount(): number {
    return this.liveRows;
  }

  /** Whether the graph answers (false: every query is an exact scan). */
  get hasGraph(): boolean {
    return this.graph !== undefined && !this.graph.failed;
  }

  /** Why the graph's worker thread no longer answers (every query is exact); undefined while it does. */
  get graphFailure(): string | undefined {
    return this.graph?.failed === 'closed' ? undefined : this.graph?.failed;
  }

  /** Passage vectors added but not yet in the graph (scanned exactly at each query meanwhile). */
  get pending(): number {
    if (this.graph && !this.graph.failed) return this.rows - this.graph.upTo;
    return this.liveRows >= this.exactBelow && !this.graph ? this.rows : 0;
  }

  /** What the graph is built with: a persisted graph made otherwise is not used. */
  get graphKey(): string {
    return graphKeyOf(this.dims, this.graphOptions);
  }

  /** Whether `id` is held. */
  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** The fingerprint `id` was added with, or undefined. */
  fingerprint(id: string): number | undefined {
    const s = this.slots.get(id);
    return s === undefined ? undefined : this.fps.get(s);
  }

  /**
   * Adds (or replaces) item `id` with its passage vectors; no vectors removes it. Every vector
   * must have `dims` finite numbers, not all zero. The graph takes them in the background.
   */
  add(id: string, vectors: ReadonlyArray<ArrayLike<number>>, fingerprint = 0): void {
    const { dims } = this;
    // Each vector's scale to unit length, from the pass that checks it (one pass fewer a vector).
    const scales = vectors.map((v, i) => {
      if (v.length !== dims) throw new VectorError(`vector ${i} of ${id} has ${v.length} numbers, expected ${dims}`);
      let norm = 0;
      for (let d = 0; d < dims; d++) {
        if (!Number.isFinite(v[d])) throw new VectorError(`vector ${i} of ${id} has a non-finite number at ${d}`);
        norm += v[d] * v[d];
      }
      if (norm === 0) throw new VectorError(`vector ${i} of ${id} is all zeros`);
      return 1 / Math.sqrt(norm);
    });
    this.removeOne(id);
    if (vectors.length === 0) return;
    const slot = this.ids.push(id);
    this.slots.set(id, slot);
    this.first.push(this.rows);
    this.count.push(vectors.length);
    this.fps.push(fingerprint >>> 0);
    vectors.forEach((v, i) => {
      this.blocks.append(v, scales[i]);
      this.rowSlot.push(slot);
    });
    this.liveRows += vectors.length;
    this.schedule();
  }

  /** Removes these items (unknown ids are ignored); they are never returned again. */
  remove(ids: Iterable<string>): void {
    for (const id of ids) this.removeOne(id);
  }

  private removeOne(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    const from = this.first.get(slot);
    const to = from + this.count.get(slot);
    const sent: number[] = [];
    const sentUpTo = this.graph?.sent ?? 0;
    for (let r = from; r < to; r++) {
      this.rowSlot.set(r, -1);
      if (r < sentUpTo) sent.push(r);
    }
    this.graph?.remove(sent);
    this.liveRows -= to - from;
    this.ids.set(slot, null);
    this.slots.delete(id);
  }

  /**
   * The `k` items nearest `query` (a vector of `dims` numbers), best first, among those `accept`
   * takes (all when absent). Exact below `exactBelow` vectors and for a small accepted set;
   * otherwise the graph's neighbours (fetching more while too few are accepted), with the rows
   * not yet in the graph scanned exactly; a filter that leaves too few after `maxFetch`
   * neighbours falls back to the exact scan of what it accepts.
   */
  async search(query: ArrayLike<number>, k: number, accept?: Accept): Promise<VectorHit[]> {
    const q = this.normalised(query);
    if (k <= 0 || this.slots.size === 0) return [];
    const test = this.slotTest(accept);
    if (accept instanceof Set) {
      let rows = 0;
      for (const id of accept as ReadonlySet<string>) {
        const s = this.slots.get(id);
        if (s !== undefined) rows += this.count.get(s);
      }
      if (rows <= this.exactFilteredBelow) return this.exactOver(this.slotsOf(accept as ReadonlySet<string>), q, k);
    }
    const perItem = Math.max(1, Math.ceil(this.liveRows / Math.max(1, this.slots.size)));
    for (let fetch = Math.max(2 * k, 16) * perItem; this.hasGraph && this.liveRows >= this.exactBelow; fetch *= 4) {
      const n = Math.min(fetch, this.maxFetch);
      const answer = await this.fromGraph(q, n, test);
      if (!answer) break;
      // Enough accepted items, or every row of the graph asked for: the answer. Else ask for more.
      if (answer.found.size >= k || n >= answer.upTo) return this.best(answer.found, k);
      if (n >= this.maxFetch) break;
    }
    // No graph (small, failed, closed) or a filter that leaves too few: exact, over what is held now.
    if (this.slots.size === 0) return [];
    return this.exact(q, k, test);
  }

  /** Settles once every vector added so far is in the graph (or none is needed, or the graph failed). */
  async settle(): Promise<void> {
    for (;;) {
      this.pump();
      const g = this.graph;
      if (!g || g.failed || this.closed || g.upTo >= this.rows) return;
      await g.settle();
      // The worker has taken what was sent: more may be left to send.
      if (g.sent >= this.rows && g.upTo >= this.rows) return;
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Stops building the graph and ends its worker thread (a search still answers, exactly). */
  close(): void {
    this.closed = true;
    this.graph?.close().catch(() => undefined);
  }

  private normalised(query: ArrayLike<number>): Float32Array {
    if (query.length !== this.dims)
      throw new VectorError(`the query vector has ${query.length} numbers, expected ${this.dims}`);
    const q = Float32Array.from(query);
    let norm = 0;
    for (let d = 0; d < this.dims; d++) {
      if (!Number.isFinite(q[d])) throw new VectorError(`the query vector has a non-finite number at ${d}`);
      norm += q[d] * q[d];
    }
    if (norm > 0) for (let d = 0; d < this.dims; d++) q[d] /= Math.sqrt(norm);
    return q;
  }

  private slotTest(accept: Accept | undefined): ((slot: number) => boolean) | undefined {
    if (!accept) return undefined;
    if (typeof accept === 'function') return (slot) => accept(this.ids.get(slot) as string);
    return (slot) => accept.has(this.ids.get(slot) as string);
  }

  private *slotsOf(ids: ReadonlySet<string>): Generator<number> {
    for (const id of ids) {
      const s = this.slots.get(id);
      if (s !== undefined) yield s;
    }
  }

  private *liveSlots(): Generator<number> {
    for (let s = 0; s < this.ids.length; s++) if (this.ids.get(s) !== null) yield s;
  }

  private slotScore(slot: number, q: Float32Array): number {
    let best = -Infinity;
    const from = this.first.get(slot);
    for (let r = from; r < from + this.count.get(slot); r++) best = Math.max(best, this.dot(r, q));
    return best;
  }

  /** Dot product of row `r` with `q`. */
  private dot(r: number, q: Float32Array): number {
    return this.blocks.dot(r, q);
  }

  private exact(q: Float32Array, k: number, test: ((slot: number) => boolean) | undefined): VectorHit[] {
    const slots = this.liveSlots();
    return this.exactOver(test ? filterIter(slots, test) : slots, q, k);
  }

  private exactOver(slots: Iterable<number>, q: Float32Array, k: number): VectorHit[] {
    const top = new TopK(k);
    for (const s of slots) top.push(this.slotScore(s, q), s);
    const { rows, scores } = top.sorted();
    return Array.from(rows, (s, i) => ({ id: this.ids.get(s) as string, score: scores[i] }));
  }

  /**
   * Best score of each accepted live item among the graph's `fetch` neighbours and the rows not in
   * the graph when it answered (its `upTo`); undefined when the graph did not answer.
   */
  private async fromGraph(
    q: Float32Array,
    fetch: number,
    test: ((slot: number) => boolean) | undefined,
  ): Promise<{ found: Map<number, number>; upTo: number } | undefined> {
    // Every candidate the search examined comes back (ef of them, or `fetch` when more), to be
    // scored again on the f32 rows below: the same cost in the graph, a dot product each here.
    const ef = this.expansionSearch ?? DEFAULT_EXPANSION_SEARCH;
    const answer = await this.graph?.search(q, Math.max(fetch, ef), ef);
    if (!answer) return undefined;
    // From here on, one turn: what the index holds now (rows removed meanwhile are dead, -1).
    const found = new Map<number, number>();
    const offer = (slot: number, score: number) => {
      if (slot < 0 || (test && !test(slot))) return;
      const had = found.get(slot);
      if (had === undefined || score > had) found.set(slot, score);
    };
    const { keys, upTo } = answer;
    // Scored on the f32 rows, not the graph's f16 copy: the same scale as the rows not yet in the
    // graph and the exact path. (At 1M it did not change recall@10: the misses are neighbours the
    // search never reached, not ones f16 ordered wrongly; BENCHMARKS.md, "Vector index libraries".)
    for (let i = 0; i < keys.length; i++) {
      const slot = keys[i] < this.rows ? this.rowSlot.get(keys[i]) : -1;
      if (slot >= 0) offer(slot, this.dot(keys[i], q));
    }
    for (let r = upTo; r < this.rows; r++) {
      const slot = this.rowSlot.get(r);
      if (slot >= 0) offer(slot, this.dot(r, q));
    }
    return { found, upTo };
  }

  private best(found: Map<number, number>, k: number): VectorHit[] {
    const top = new TopK(k);
    for (const [slot, score] of found) top.push(score, slot);
    const { rows, scores } = top.sorted();
    return Array.from(rows, (s, i) => ({ id: this.ids.get(s) as string, score: scores[i] }));
  }

  /** Sends the rows added this turn to the graph at the end of it (one chunk for many adds). */
  private schedule(): void {
    if (this.closed || this.pumpQueued) return;
    if (!this.graph && this.liveRows < this.exactBelow) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private newGraph(): GraphWorker {
    return new GraphWorker(
      { dims: this.dims, options: this.graphOptions, threads: this.threads, sliceMs: this.sliceMs },
      (reason) => this.onGraphFailure(reason),
      () => this.pump(),
      (buffer) => this.blocks.offer(buffer),
    );
  }

  /**
   * Names the rows not yet sent to the graph's worker, at most a block a chunk, while it has fewer
   * than `AHEAD_ROWS` to take (its progress calls this again); it reads them from the shared
   * blocks, each handed to it once.
   */
  private pump(): void {
    if (this.closed) return;
    if (!this.graph && this.liveRows < this.exactBelow) return;
    const graph = (this.graph ??= this.newGraph());
    // The next new block from the worker, its pages already in memory (row-blocks.ts).
    if (this.blocks.wantsSpare) graph.askSpare();
    while (!graph.failed && graph.sent < this.rows && graph.sent - graph.upTo < AHEAD_ROWS) {
      const from = graph.sent;
      const block = Math.floor(from / BLOCK_ROWS);
      const to = Math.min(this.rows, (block + 1) * BLOCK_ROWS);
      if (graph.lastBlock !== block) graph.block(block, this.blocks.shared(block));
      const dead: number[] = [];
      for (let r = from; r < to; r++) if (this.rowSlot.get(r) < 0) dead.push(r);
      graph.add(from, to, dead);
    }
  }

  /**
   * The index's state now, for the persisted file: copies of the per-item and per-row arrays, and
   * a view of the vectors (rows are never written again once added, so the view stays true).
   */
  snapshot(): VectorSnapshot {
    return {
      dims: this.dims,
      ids: this.ids.toArray(),
      fingerprints: this.fps.toArray(),
      first: this.first.toArray(),
      count: this.count.toArray(),
      rowSlot: this.rowSlot.toArray(),
      vectors: this.blocks.parts(),
    };
  }

  /**
   * Writes the graph to `path` (usearch's own format, by the worker thread); the rows it holds
   * (the first ones of the index), or undefined when there is no graph (or it failed).
   */
  async saveGraph(path: string): Promise<number | undefined> {
    if (!this.graph || this.graph.failed) return undefined;
    return this.graph.save(path);
  }

  /**
   * An index with `snap`'s items (it takes `snap`'s arrays: they must not be used elsewhere).
   * `graph`: a graph file saved by `saveGraph` when the index held the first `rows` rows of `snap`;
   * the rest are added to it in the background. Without one the graph is rebuilt in the background
   * when the index is large enough. `known`: items whose ids the caller holds (its feed's): the
   * index keeps those strings for the ids it reads, rather than a second string of each (at 1M,
   * new strings and the arrays that held them were most of what the load left on the heap, and
   * the collector marked it all in one pause of 220-340 ms on the loop thread, issue 41). A file's
   * ids that cannot be read throw `VectorFileError` (vector-file.ts).
   */
  static async restore(
    opts: VectorIndexOptions,
    snap: StoredSnapshot,
    graph?: { path: string; rows: number },
    known: ReadonlyArray<{ readonly id: string }> = [],
  ): Promise<VectorIndex> {
    const index = new VectorIndex(opts);
    if (snap.dims !== index.dims)
      throw new VectorError(`the snapshot has ${snap.dims} dimensions, expected ${index.dims}`);
    const rows = snap.rowSlot.length;
    // Taken, not copied (the snapshot is the caller's to give: a file's decoded arrays, or
    // `snapshot()`'s copies): four copies of 1M numbers in one turn were a stall at a start. Items
    // and rows added later go to chunks after them (lib/chunked-list.ts).
    // (Views of a file's buffer, a SharedArrayBuffer (vector-store.ts), or `toArray` copies.)
    index.first = new ChunkedList(int32s, snap.first as Int32Array<ArrayBuffer>);
    index.count = new ChunkedList(int32s, snap.count as Int32Array<ArrayBuffer>);
    index.fps = new ChunkedList(uint32s, snap.fingerprints as Uint32Array<ArrayBuffer>);
    index.rowSlot = new ChunkedList(int32s, snap.rowSlot as Int32Array<ArrayBuffer>);
    // Whole blocks are views of the snapshot's arrays (RowBlocks.from: at 1M rows copying them cost
    // a second 1.5 GB at every start); a partial one is copied, to grow.
    index.blocks = RowBlocks.from(index.dims, snap.vectors);
    if (index.rows !== rows) throw new VectorError(`the snapshot has ${index.rows} vectors for ${rows} rows`);
    // The known ids first, each mapped to −2 − its place in `known`; an id read from the snapshot
    // finds its known string there and takes its slot in its stead. In steps: 1M ids into the map
    // in one turn held the loop for hundreds of ms at a start.
    const { slots } = index;
    const step = stepper();
    const due = (i: number) => (i % RESTORE_STEP_ITEMS === RESTORE_STEP_ITEMS - 1 ? step() : undefined);
    for (let k = 0, s; k < known.length; k++) {
      if ((s = due(k))) await s;
      slots.set(known[k].id, -2 - k);
    }
    let found = 0;
    const put = (id: string | null, s: number) => {
      if (id === null) {
        index.ids.push(null);
        return;
      }
      const had = slots.get(id);
      let mine = id;
      if (had !== undefined && had <= -2) {
        mine = known[-2 - had].id;
        found++;
      }
      index.ids.push(mine);
      slots.set(mine, s);
      index.liveRows += snap.count[s];
    };
    const { ids } = snap;
    if (Array.isArray(ids))
      for (let s = 0, p; s < ids.length; s++) {
        if ((p = due(s))) await p;
        put(ids[s], s);
      }
    else await (ids as IdReader).read(put, step);
    // Known ids the snapshot does not hold leave the map (none when the caller checked the content).
    if (found < known.length)
      for (let k = 0, s; k < known.length; k++) {
        if ((s = due(k))) await s;
        if ((slots.get(known[k].id) ?? 0) <= -2) slots.delete(known[k].id);
      }
    if (graph) {
      const g = index.newGraph();
      // Rows that died after the graph was saved (the snapshot is newer) leave it once read.
      const dead: number[] = [];
      for (let r = 0; r < graph.rows; r++) if (index.rowSlot.get(r) < 0) dead.push(r);
      if (await g.load(graph.path, graph.rows, Float64Array.from(dead))) index.graph = g;
      else {
        // Not read (the worker says why through onGraphFailure): built again from the vectors.
        await g.close();
      }
    }
    index.schedule();
    return index;
  }
}

function* filterIter(it: Iterable<number>, test: (slot: number) => boolean): Generator<number> {
  for (const x of it) if (test(x)) yield x;
}
