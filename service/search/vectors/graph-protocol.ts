import type { GraphOptions } from './hnsw-graph';

/**
 * The messages between a `VectorIndex` (graph-worker.ts) and the worker thread that owns its HNSW
 * graph (hnsw-worker.ts). Rows are the index's row numbers; the worker offers them to the graph in
 * ascending order, so "rows before `upTo`" is what the graph has taken. The rows' vectors live in
 * blocks shared with the worker (row-blocks.ts): a block's buffer is sent once, and an `add` names
 * a range of rows in it, so no message carries (and copies) rows.
 */

/** What the worker is started with. */
export interface GraphWorkerData {
  readonly dims: number;
  readonly options: GraphOptions;
  /** Threads one call of the library's `add` uses. */
  readonly threads: number;
  /** Length of one slice of adding, ms: a search waits for one slice at most. */
  readonly sliceMs: number;
}

/** To the worker. */
export type ToGraph =
  /** The shared buffer of block `block` (its rows start at `block × BLOCK_ROWS`), sent before any of its rows. */
  | { readonly t: 'block'; readonly block: number; readonly buffer: SharedArrayBuffer }
  /** Rows `from` to `end` (excluded, within one block) but `dead` (ascending: removed before they were sent). */
  | { readonly t: 'add'; readonly from: number; readonly end: number; readonly dead: readonly number[] }
  /** Rows to take out (those not offered yet are skipped when they come). */
  | { readonly t: 'remove'; readonly rows: readonly number[] }
  /** A spare block's buffer, its pages touched by the worker (row-blocks.ts: `offer`). */
  | { readonly t: 'spare' }
  /** `ef`: candidates searched (the graph's `expansionSearch` when absent). */
  | {
      readonly t: 'search';
      readonly id: number;
      readonly query: Float32Array;
      readonly fetch: number;
      readonly ef?: number;
    }
  | { readonly t: 'save'; readonly id: number; readonly path: string }
  /** Reads a graph file holding the first `rows` rows, then takes `dead` out of it. */
  | {
      readonly t: 'load';
      readonly id: number;
      readonly path: string;
      readonly rows: number;
      readonly dead: Float64Array;
    };

/** From the worker. */
export type FromGraph =
  | { readonly t: 'progress'; readonly upTo: number }
  /** A zeroed shared buffer of a block, every page of it touched. */
  | { readonly t: 'spare'; readonly buffer: SharedArrayBuffer }
  /** A search's neighbours (rows) and similarities, and the rows the graph had taken then. */
  | {
      readonly t: 'found';
      readonly id: number;
      readonly keys: Float64Array;
      readonly scores: Float64Array;
      readonly upTo: number;
    }
  | { readonly t: 'saved'; readonly id: number; readonly upTo: number }
  | { readonly t: 'loaded'; readonly id: number; readonly upTo: number }
  | { readonly t: 'failed'; readonly id?: number; readonly message: string };
