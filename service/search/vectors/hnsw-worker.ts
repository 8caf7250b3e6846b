import { parentPort, workerData } from 'node:worker_threads';
import { HnswGraph } from './hnsw-graph';
import type { FromGraph, GraphWorkerData, ToGraph } from './graph-protocol';
import { BLOCK_ROWS, blockBytes } from './row-blocks';

/**
 * The worker thread that owns the HNSW graph (graph-worker.ts starts it): every call into usearch
 * (add and the capacity doubling inside it, remove, search, save, load) runs here, never on the
 * service's event loop. Rows come in chunks and go into the graph a slice of about `sliceMs` at a
 * time, a turn of this thread's loop between slices so that a search waits for one slice at most.
 * The rows' vectors are read from the index's blocks, shared with this thread (row-blocks.ts).
 * Rows are offered in ascending order; `upTo` is the first row not offered yet (a row removed
 * before it is offered is skipped).
 */

const data = workerData as GraphWorkerData;
const port = parentPort!;
const graph = new HnswGraph(data.dims, data.options, data.threads);
let upTo = 0;
const deadAhead = new Set<number>();
// The index's blocks of rows, shared with it (row-blocks.ts): read here, never written.
const blocks: Float32Array[] = [];
// Ranges not yet wholly in the graph (each within one block): the next row to offer, the row after
// the range, and its rows that were dead when sent.
const chunks: Array<{ at: number; end: number; dead: ReadonlySet<number> }> = [];
let batch = 4;
let adding = false;

const post = (m: FromGraph, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

function addSlice(): void {
  adding = false;
  const chunk = chunks[0];
  if (!chunk) return;
  const from = chunk.at;
  const to = Math.min(chunk.end, from + batch);
  const rows: number[] = [];
  for (let r = from; r < to; r++) if (!chunk.dead.has(r) && !deadAhead.delete(r)) rows.push(r);
  const started = performance.now();
  const { dims } = data;
  const block = blocks[Math.floor(from / BLOCK_ROWS)];
  const at = (from % BLOCK_ROWS) * dims;
  // A view of the shared rows when they follow each other (nearly always), else the live ones packed.
  graph.add(
    rows,
    rows.length === to - from ? block.subarray(at, at + rows.length * dims) : packRows(block, dims, rows),
  );
  const took = performance.now() - started;
  batch = Math.max(1, Math.min(4096, Math.round(batch * Math.min(2, data.sliceMs / Math.max(took, 0.01)))));
  upTo = to;
  chunk.at = to;
  if (to >= chunk.end) chunks.shift();
  post({ t: 'progress', upTo });
  schedule();
}

function packRows(block: Float32Array, dims: number, rows: readonly number[]): Float32Array {
  const out = new Float32Array(rows.length * dims);
  rows.forEach((r, j) => {
    const at = (r % BLOCK_ROWS) * dims;
    out.set(block.subarray(at, at + dims), j * dims);
  });
  return out;
}

/** Bytes a page of memory holds (4 KiB on the machines this runs on; a larger page is touched more than once). */
const PAGE_BYTES = 4096;
/** Pages touched between two turns of this thread's loop (~20 µs each on these virtual machines: ~5 ms). */
const PAGES_A_TURN = 256;

/**
 * Allocates a block's buffer and touches each page of it, a few hundred pages a turn (graph slices
 * and searches go on between), then hands it to the index: the page faults are this thread's, not
 * the event loop's (row-blocks.ts).
 */
function spare(): void {
  const buffer = new SharedArrayBuffer(blockBytes(data.dims));
  const words = new Int32Array(buffer);
  const step = PAGE_BYTES / Int32Array.BYTES_PER_ELEMENT;
  const touch = (from: number) => {
    const to = Math.min(words.length, from + PAGES_A_TURN * step);
    // Nobody else holds the buffer yet: a plain write of the zero already there.
    for (let i = from; i < to; i += step) words[i] = 0;
    if (to < words.length) setImmediate(() => touch(to));
    else post({ t: 'spare', buffer });
  };
  touch(0);
}

function schedule(): void {
  if (adding || chunks.length === 0) return;
  adding = true;
  setImmediate(addSlice);
}

port.on('message', (m: ToGraph) => {
  try {
    switch (m.t) {
      case 'block':
        blocks[m.block] = new Float32Array(m.buffer);
        break;
      case 'add':
        chunks.push({ at: m.from, end: m.end, dead: new Set(m.dead) });
        schedule();
        break;
      case 'spare':
        spare();
        break;
      case 'remove': {
        const now: number[] = [];
        for (const r of m.rows)
          if (r < upTo) now.push(r);
          else deadAhead.add(r);
        graph.remove(now);
        break;
      }
      case 'search': {
        const keys: number[] = [];
        const scores: number[] = [];
        graph.search(
          m.query,
          m.fetch,
          (row, score) => {
            keys.push(row);
            scores.push(score);
          },
          m.ef,
        );
        const k = Float64Array.from(keys);
        const s = Float64Array.from(scores);
        post({ t: 'found', id: m.id, keys: k, scores: s, upTo }, [k.buffer, s.buffer]);
        break;
      }
      case 'save':
        graph.save(m.path);
        post({ t: 'saved', id: m.id, upTo });
        break;
      case 'load':
        graph.load(m.path);
        upTo = m.rows;
        graph.remove(Array.from(m.dead));
        post({ t: 'loaded', id: m.id, upTo });
        break;
    }
  } catch (e) {
    post({ t: 'failed', id: 'id' in m ? m.id : undefined, message: (e as Error).message });
  }
});
