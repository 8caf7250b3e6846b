import { Index, MetricKind, ScalarKind } from 'usearch';

/**
 * The approximate nearest-neighbour graph: usearch's HNSW index (chosen over hnswlib-node by
 * bench/vectors/run.ts; BENCHMARKS.md), keyed by row number, over unit vectors with the inner
 * product as similarity (the cosine, as the vectors are normalised before they come here). The one
 * file that knows the library: what it is built with, how rows go in and come out, its file.
 */

/** Settings of the HNSW graph. */
export interface GraphOptions {
  /** Links a node keeps (HNSW's M). @default 16 */
  readonly connectivity?: number;
  /**
   * Candidates while adding (efConstruction; usearch's default). At 1M clustered vectors of 384
   * dimensions 128 gives recall@10 0.993 at ef 128 and 0.995 at 256; 64 builds 1.7× faster but gave
   * 0.842 and 0.888 there (BENCHMARKS.md, "Vector index libraries", 1M). @default 128
   */
  readonly expansionAdd?: number;
  /**
   * Candidates while searching (ef; a search asking for more neighbours uses that many). Not part
   * of the graph: a search may ask for another (`HnswGraph.search`). Query cost grows about
   * linearly with it: at 1M, 0.9 ms awaited at 128 and 1.3 ms at 256 once the graph's memory is
   * warm (BENCHMARKS.md, "Vector index libraries", 1M). The service's is `SEARCH_SEMANTIC_EF`.
   * @default 256
   */
  readonly expansionSearch?: number;
  /** How the graph stores vectors: f16 halves its memory for no measurable loss of recall. @default 'f16' */
  readonly quantization?: 'f16' | 'f32';
}

/** `GraphOptions.expansionAdd`'s default. */
export const DEFAULT_EXPANSION_ADD = 128;
/** `GraphOptions.expansionSearch`'s default. */
export const DEFAULT_EXPANSION_SEARCH = 256;

/** What a graph of `dims` dimensions built with `options` is made with: a persisted graph made otherwise is not used. */
export function graphKeyOf(dims: number, options: GraphOptions = {}): string {
  const quantization = options.quantization ?? 'f16';
  return `usearch:ip:${quantization}:m${options.connectivity ?? 16}:ef${options.expansionAdd ?? DEFAULT_EXPANSION_ADD}:d${dims}`;
}

/**
 * See the file's comment. It runs in the graph's worker thread (hnsw-worker.ts): its calls are
 * synchronous and long (a capacity doubling inside `add` takes ~190 ms of CPU at 524,288 rows).
 */
export class HnswGraph {
  private readonly index: Index;
  private readonly expansionSearch: number;
  /** What the graph is built with: a persisted graph made otherwise is not used. */
  readonly key: string;

  constructor(
    readonly dims: number,
    options: GraphOptions = {},
    private readonly threads = 1,
  ) {
    const connectivity = options.connectivity ?? 16;
    const expansionAdd = options.expansionAdd ?? DEFAULT_EXPANSION_ADD;
    const quantization = options.quantization ?? 'f16';
    this.index = new Index({
      dimensions: dims,
      metric: MetricKind.IP,
      quantization: quantization === 'f16' ? ScalarKind.F16 : ScalarKind.F32,
      connectivity,
      expansion_add: expansionAdd,
      // Each search asks for max(ef, neighbours) itself (the library searches with the larger of
      // its own setting and the neighbours asked for): ef is a search's choice, not the graph's.
      expansion_search: 1,
      multi: false,
    });
    this.expansionSearch = options.expansionSearch ?? DEFAULT_EXPANSION_SEARCH;
    this.key = graphKeyOf(dims, options);
  }

  /** Vectors held. */
  get size(): number {
    return this.index.size();
  }

  /**
   * Adds rows `rows` (ascending), whose vectors are `vectors` one after the other, synchronously
   * (the library runs `threads − 1` helpers and joins them). When they do not fit, the library
   * first doubles its capacity in the same call, whatever the batch: ~96 ms of CPU at 262,144
   * rows, ~190 ms at 524,288 (bench/vectors/capacity.ts); its JS binding has no `reserve`.
   */
  add(rows: readonly number[], vectors: Float32Array): void {
    if (rows.length > 0) this.index.add(BigUint64Array.from(rows, BigInt), vectors, this.threads);
  }

  /** Removes these rows (those not held are ignored). */
  remove(rows: readonly number[]): void {
    if (rows.length > 0) this.index.remove(BigUint64Array.from(rows, BigInt));
  }

  /**
   * The `fetch` rows nearest `query` (unit length), with their similarity, to `visit`, searched
   * with `ef` candidates (the graph's `expansionSearch` when not given).
   */
  search(query: Float32Array, fetch: number, visit: (row: number, score: number) => void, ef?: number): void {
    if (this.index.size() === 0) return;
    const m = this.index.search(query, Math.max(fetch, ef ?? this.expansionSearch), 1);
    // Best first: the first `fetch`. Inner product distance is 1 − dot.
    for (let i = 0; i < Math.min(fetch, m.keys.length); i++) visit(Number(m.keys[i]), 1 - m.distances[i]);
  }

  /** Writes the graph to `path` in usearch's format (one synchronous call: the library has no other). */
  save(path: string): void {
    this.index.save(path);
  }

  /** Reads a graph written by `save` into this empty one (one synchronous call). */
  load(path: string): void {
    this.index.load(path);
  }
}
