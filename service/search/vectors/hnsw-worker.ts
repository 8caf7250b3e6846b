import { parentPort, workerData } from 'node:worker_threads';
import { HnswGraph } from './hnsw-graph';
import type { FromGraph, GraphWorkerData, ToGraph } from './graph-protocol';

/**
 * The worker thread that owns the HNSW graph (graph-worker.ts starts it): every call into usearch
 * (add and the capacity doubling inside it, remove, search, save, load) runs here, never on the
 * service's event loop. Rows come in chunks and go into the graph a slice of about `sliceMs` at a
 * time, a turn of this thread's loop between slices so that a search waits for one slice at most.
 * Rows are offered in ascending order; `upTo` is the first row not offered yet (a row removed
 * before it is offered is skipped).
 */

const data = workerData as GraphWorkerData;
const port = parentPort!;
const graph = new HnswGraph(data.dims, data.options, data.threads);
let upTo = 0;
const deadAhead = new Set<number>();
// Chunks not yet wholly in the graph: their rows (ascending, live when sent), vectors, the next one
// to add, and the row after the chunk's range.
const chunks: Array<{ rows: Float64Array; vectors: Float32Array; at: number; end: number }> = [];
let batch = 4;
let adding = false;

const post = (m: FromGraph, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

function addSlice(): void {
  adding = false;
  const chunk = chunks[0];
  if (!chunk) return;
  const to = Math.min(chunk.rows.length, chunk.at + batch);
  const rows: number[] = [];
  const keep: number[] = [];
  for (let i = chunk.at; i < to; i++) {
    const r = chunk.rows[i];
    if (deadAhead.delete(r)) continue;
    rows.push(r);
    keep.push(i);
  }
  const started = performance.now();
  const { dims } = data;
  const contiguous = keep.length === to - chunk.at;
  graph.add(
    rows,
    contiguous ? chunk.vectors.subarray(chunk.at * dims, to * dims) : packRows(chunk.vectors, dims, keep),
  );
  const took = performance.now() - started;
  batch = Math.max(1, Math.min(4096, Math.round(batch * Math.min(2, data.sliceMs / Math.max(took, 0.01)))));
  upTo = to < chunk.rows.length ? chunk.rows[to] : chunk.end;
  chunk.at = to;
  if (to >= chunk.rows.length) chunks.shift();
  post({ t: 'progress', upTo });
  schedule();
}

function packRows(vectors: Float32Array, dims: number, keep: number[]): Float32Array {
  const out = new Float32Array(keep.length * dims);
  keep.forEach((i, j) => out.set(vectors.subarray(i * dims, (i + 1) * dims), j * dims));
  return out;
}

function schedule(): void {
  if (adding || chunks.length === 0) return;
  adding = true;
  setImmediate(addSlice);
}

port.on('message', (m: ToGraph) => {
  try {
    switch (m.t) {
      case 'add':
        chunks.push({ rows: m.rows, vectors: m.vectors, at: 0, end: m.end });
        schedule();
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
