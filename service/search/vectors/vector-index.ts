import { availableParallelism } from 'node:os';
import { yieldToLoop } from '../../lib/yield-to-loop';
import { dotRow, TopK } from './exact-scan';
import { HnswGraph, type GraphOptions } from './hnsw-graph';

/**
 * Nearest neighbours by meaning: items with one or more passage vectors, searched by cosine
 * similarity, an item scoring as its best passage. Vectors are normalised when added and kept
 * in a `Float32Array` (the source of every exact answer, of the persisted file and of a rebuild);
 * from `exactBelow` live passage vectors on, a usearch HNSW graph (bench/vectors/run.ts chose it,
 * BENCHMARKS.md) answers unfiltered and mildly filtered queries. Passage vectors are added to the
 * graph in the background, a slice of about `sliceMs` a turn of the event loop; the rows not yet
 * in the graph are scanned exactly at each query, so an item is found from the moment it is
 * added. A removed item's rows are marked dead at once and never returned, whatever the graph
 * still holds.
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
  /** Length of one slice of graph building, ms. @default 10 */
  readonly sliceMs?: number;
  /** Threads one slice of graph building uses. @default the machine's cores, at most 4 */
  readonly threads?: number;
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

const grow = <T extends Int32Array | Uint32Array | Float32Array>(a: T, need: number, make: (n: number) => T): T => {
  if (need <= a.length) return a;
  const b = make(Math.max(need, a.length * 2, 64));
  b.set(a);
  return b;
};

/** Rows a block of vectors holds (6 MiB at 384 dimensions). */
const BLOCK_ROWS = 4096;

/** See the file's comment. */
export class VectorIndex {
  readonly dims: number;
  private readonly exactBelow: number;
  private readonly exactFilteredBelow: number;
  private readonly maxFetch: number;
  private readonly sliceMs: number;
  private readonly threads: number;
  private readonly graphOptions: GraphOptions;

  // Rows in blocks of BLOCK_ROWS: adding never copies the rows already held (a doubling array
  // did, 192 ms of CPU in one turn at 16k → 32k rows of 384 numbers).
  private blocks: Float32Array[] = [];
  private rowSlot = new Int32Array(64);
  private rows = 0;
  private ids: Array<string | null> = [];
  private slots = new Map<string, number>();
  private first = new Int32Array(64);
  private count = new Int32Array(64);
  private fps = new Uint32Array(64);
  private liveRows = 0;

  private graph: HnswGraph | undefined;
  // Rows before this one have been offered to the graph (dead ones skipped).
  private graphUpTo = 0;
  private draining: Promise<void> | undefined;
  private closed = false;

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
    return this.graph !== undefined;
  }

  /** Passage vectors added but not yet in the graph (scanned exactly at each query meanwhile). */
  get pending(): number {
    return this.graph || this.liveRows >= this.exactBelow ? this.rows - this.graphUpTo : 0;
  }

  /** What the graph is built with: a persisted graph made otherwise is not used. */
  get graphKey(): string {
    return (this.graph ?? this.newGraph()).key;
  }

  /** Whether `id` is held. */
  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** The fingerprint `id` was added with, or undefined. */
  fingerprint(id: string): number | undefined {
    const s = this.slots.get(id);
    return s === undefined ? undefined : this.fps[s];
  }

  /**
   * Adds (or replaces) item `id` with its passage vectors; no vectors removes it. Every vector
   * must have `dims` finite numbers, not all zero. The graph takes them in the background.
   */
  add(id: string, vectors: ReadonlyArray<ArrayLike<number>>, fingerprint = 0): void {
    const { dims } = this;
    vectors.forEach((v, i) => {
      if (v.length !== dims) throw new VectorError(`vector ${i} of ${id} has ${v.length} numbers, expected ${dims}`);
      let norm = 0;
      for (let d = 0; d < dims; d++) {
        if (!Number.isFinite(v[d])) throw new VectorError(`vector ${i} of ${id} has a non-finite number at ${d}`);
        norm += v[d] * v[d];
      }
      if (norm === 0) throw new VectorError(`vector ${i} of ${id} is all zeros`);
    });
    this.removeOne(id);
    if (vectors.length === 0) return;
    const slot = this.ids.length;
    this.ids.push(id);
    this.slots.set(id, slot);
    this.first = grow(this.first, slot + 1, (n) => new Int32Array(n));
    this.count = grow(this.count, slot + 1, (n) => new Int32Array(n));
    this.fps = grow(this.fps, slot + 1, (n) => new Uint32Array(n));
    this.first[slot] = this.rows;
    this.count[slot] = vectors.length;
    this.fps[slot] = fingerprint >>> 0;
    const need = this.rows + vectors.length;
    this.rowSlot = grow(this.rowSlot, need, (n) => new Int32Array(n));
    for (const v of vectors) {
      let norm = 0;
      for (let d = 0; d < dims; d++) norm += v[d] * v[d];
      const inv = 1 / Math.sqrt(norm);
      if (this.rows % BLOCK_ROWS === 0) this.blocks.push(new Float32Array(BLOCK_ROWS * dims));
      const block = this.blocks[this.blocks.length - 1];
      const at = (this.rows % BLOCK_ROWS) * dims;
      for (let d = 0; d < dims; d++) block[at + d] = v[d] * inv;
      this.rowSlot[this.rows++] = slot;
    }
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
    const from = this.first[slot];
    const to = from + this.count[slot];
    const inGraph: number[] = [];
    for (let r = from; r < to; r++) {
      this.rowSlot[r] = -1;
      if (r < this.graphUpTo) inGraph.push(r);
    }
    this.graph?.remove(inGraph);
    this.liveRows -= to - from;
    this.ids[slot] = null;
    this.slots.delete(id);
  }

  /**
   * The `k` items nearest `query` (a vector of `dims` numbers), best first, among those `accept`
   * takes (all when absent). Exact below `exactBelow` vectors and for a small accepted set;
   * otherwise the graph's neighbours (fetching more while too few are accepted), with the rows
   * not yet in the graph scanned exactly; a filter that leaves too few after `maxFetch`
   * neighbours falls back to the exact scan of what it accepts.
   */
  search(query: ArrayLike<number>, k: number, accept?: Accept): VectorHit[] {
    const q = this.normalised(query);
    if (k <= 0 || this.slots.size === 0) return [];
    const test = this.slotTest(accept);
    if (accept instanceof Set) {
      let rows = 0;
      for (const id of accept as ReadonlySet<string>) {
        const s = this.slots.get(id);
        if (s !== undefined) rows += this.count[s];
      }
      if (rows <= this.exactFilteredBelow) return this.exactOver(this.slotsOf(accept as ReadonlySet<string>), q, k);
    }
    if (!this.graph || this.liveRows < this.exactBelow) return this.exact(q, k, test);
    const perItem = Math.max(1, Math.ceil(this.liveRows / this.slots.size));
    for (let fetch = Math.max(2 * k, 16) * perItem; ; fetch *= 4) {
      const n = Math.min(fetch, this.maxFetch);
      const found = this.fromGraph(q, n, test);
      // Enough accepted items, or every row of the graph asked for: the answer. Else ask for more.
      if (found.size >= k || n >= this.graphUpTo) return this.best(found, k);
      if (n >= this.maxFetch) break;
    }
    return this.exact(q, k, test);
  }

  /** Settles once every vector added so far is in the graph (or none is needed). */
  async settle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops building the graph (a search still answers, exactly for what the graph lacks). */
  close(): void {
    this.closed = true;
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
    if (typeof accept === 'function') return (slot) => accept(this.ids[slot] as string);
    return (slot) => accept.has(this.ids[slot] as string);
  }

  private *slotsOf(ids: ReadonlySet<string>): Generator<number> {
    for (const id of ids) {
      const s = this.slots.get(id);
      if (s !== undefined) yield s;
    }
  }

  private *liveSlots(): Generator<number> {
    for (let s = 0; s < this.ids.length; s++) if (this.ids[s] !== null) yield s;
  }

  private slotScore(slot: number, q: Float32Array): number {
    let best = -Infinity;
    const from = this.first[slot];
    for (let r = from; r < from + this.count[slot]; r++) best = Math.max(best, this.dot(r, q));
    return best;
  }

  /** Dot product of row `r` with `q`. */
  private dot(r: number, q: Float32Array): number {
    return dotRow(this.blocks[Math.floor(r / BLOCK_ROWS)], this.dims, r % BLOCK_ROWS, q);
  }

  /** Rows `from..to` (within one block), a view. */
  private rowsView(from: number, to: number): Float32Array {
    const at = (from % BLOCK_ROWS) * this.dims;
    return this.blocks[Math.floor(from / BLOCK_ROWS)].subarray(at, at + (to - from) * this.dims);
  }

  private exact(q: Float32Array, k: number, test: ((slot: number) => boolean) | undefined): VectorHit[] {
    const slots = this.liveSlots();
    return this.exactOver(test ? filterIter(slots, test) : slots, q, k);
  }

  private exactOver(slots: Iterable<number>, q: Float32Array, k: number): VectorHit[] {
    const top = new TopK(k);
    for (const s of slots) top.push(this.slotScore(s, q), s);
    const { rows, scores } = top.sorted();
    return Array.from(rows, (s, i) => ({ id: this.ids[s] as string, score: scores[i] }));
  }

  /** Best score of each accepted live item among the graph's `fetch` neighbours and the rows not in the graph. */
  private fromGraph(
    q: Float32Array,
    fetch: number,
    test: ((slot: number) => boolean) | undefined,
  ): Map<number, number> {
    const found = new Map<number, number>();
    const offer = (slot: number, score: number) => {
      if (slot < 0 || (test && !test(slot))) return;
      const had = found.get(slot);
      if (had === undefined || score > had) found.set(slot, score);
    };
    this.graph?.search(q, fetch, (row, score) => offer(this.rowSlot[row], score));
    for (let r = this.graphUpTo; r < this.rows; r++) {
      const slot = this.rowSlot[r];
      if (slot >= 0) offer(slot, this.dot(r, q));
    }
    return found;
  }

  private best(found: Map<number, number>, k: number): VectorHit[] {
    const top = new TopK(k);
    for (const [slot, score] of found) top.push(score, slot);
    const { rows, scores } = top.sorted();
    return Array.from(rows, (s, i) => ({ id: this.ids[s] as string, score: scores[i] }));
  }

  private schedule(): void {
    if (this.closed || this.draining) return;
    if (!this.graph && this.liveRows < this.exactBelow) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  private newGraph(): HnswGraph {
    return new HnswGraph(this.dims, this.graphOptions, this.threads);
  }

  /** Feeds the rows not yet in the graph to it, one slice of about `sliceMs` a turn. */
  private async drain(): Promise<void> {
    const graph = (this.graph ??= this.newGraph());
    // The batch adapts so that one call to the library lasts about a slice: it starts small
    // (a graph's first inserts cost more than later ones) and at most doubles a slice.
    let batch = 4;
    while (!this.closed && this.graphUpTo < this.rows) {
      await yieldToLoop();
      const from = this.graphUpTo;
      // A batch stays within one block (a view of consecutive rows, no copy).
      const to = Math.min(this.rows, from + batch, (Math.floor(from / BLOCK_ROWS) + 1) * BLOCK_ROWS);
      const live: number[] = [];
      for (let r = from; r < to; r++) if (this.rowSlot[r] >= 0) live.push(r);
      const started = performance.now();
      if (live.length === to - from) graph.add(live, this.rowsView(from, to));
      else {
        const packed = new Float32Array(live.length * this.dims);
        live.forEach((r, i) => packed.set(this.rowsView(r, r + 1), i * this.dims));
        graph.add(live, packed);
      }
      const took = performance.now() - started;
      this.graphUpTo = to;
      batch = Math.max(1, Math.min(4096, Math.round(batch * Math.min(2, this.sliceMs / Math.max(took, 0.01)))));
    }
  }

  /**
   * The index's state now, for the persisted file: copies of the per-item and per-row arrays, and
   * a view of the vectors (rows are never written again once added, so the view stays true).
   */
  snapshot(): VectorSnapshot {
    const n = this.ids.length;
    return {
      dims: this.dims,
      ids: [...this.ids],
      fingerprints: this.fps.slice(0, n),
      first: this.first.slice(0, n),
      count: this.count.slice(0, n),
      rowSlot: this.rowSlot.slice(0, this.rows),
      vectors: this.blocks.map((b, i) => b.subarray(0, Math.min(BLOCK_ROWS, this.rows - i * BLOCK_ROWS) * this.dims)),
    };
  }

  /** Writes the graph to `path` (usearch's own format); false when there is none. */
  saveGraph(path: string): boolean {
    if (!this.graph) return false;
    this.graph.save(path);
    return true;
  }

  /** Rows the graph holds (they are offered in order): what a saved graph covers. */
  get graphRows(): number {
    return this.graph ? this.graphUpTo : 0;
  }

  /**
   * An index with `snap`'s items. `graph`: a graph file saved by `saveGraph` when the index held
   * the first `rows` rows of `snap`; the rest are added to it in the background. Without one the
   * graph is rebuilt in the background when the index is large enough.
   */
  static restore(opts: VectorIndexOptions, snap: VectorSnapshot, graph?: { path: string; rows: number }): VectorIndex {
    const index = new VectorIndex(opts);
    if (snap.dims !== index.dims)
      throw new VectorError(`the snapshot has ${snap.dims} dimensions, expected ${index.dims}`);
    const { dims } = index;
    const n = snap.ids.length;
    const rows = snap.rowSlot.length;
    index.ids = [...snap.ids];
    index.first = Int32Array.from(snap.first);
    index.count = Int32Array.from(snap.count);
    index.fps = Uint32Array.from(snap.fingerprints);
    index.rowSlot = Int32Array.from(snap.rowSlot);
    for (const part of snap.vectors)
      for (let at = 0; at < part.length; at += dims) {
        if (index.rows % BLOCK_ROWS === 0) index.blocks.push(new Float32Array(BLOCK_ROWS * dims));
        index.blocks[index.blocks.length - 1].set(part.subarray(at, at + dims), (index.rows % BLOCK_ROWS) * dims);
        index.rows++;
      }
    if (index.rows !== rows) throw new VectorError(`the snapshot has ${index.rows} vectors for ${rows} rows`);
    for (let s = 0; s < n; s++) {
      const id = snap.ids[s];
      if (id === null) continue;
      index.slots.set(id, s);
      index.liveRows += snap.count[s];
    }
    if (graph) {
      const g = index.newGraph();
      g.load(graph.path);
      index.graph = g;
      index.graphUpTo = graph.rows;
      // Rows that died after the graph was saved (the snapshot is newer) leave it now.
      const dead: number[] = [];
      for (let r = 0; r < graph.rows; r++) if (index.rowSlot[r] < 0) dead.push(r);
      g.remove(dead);
    }
    index.schedule();
    return index;
  }
}

function* filterIter(it: Iterable<number>, test: (slot: number) => boolean): Generator<number> {
  for (const x of it) if (test(x)) yield x;
}
