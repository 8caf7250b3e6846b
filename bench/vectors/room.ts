/**
 * The vector index of the service (service/search/vectors/) as it runs: `count` clustered vectors
 * of 384 dimensions added one item at a time, the graph fed in the background in ~10 ms slices;
 * the longest turn of the event loop meanwhile (`monitorEventLoopDelay`, in process), the time until
 * the graph holds everything, recall@10 against the exact scan and query p50/p99 (graph, and a
 * filter accepting 1 item in 100: fetch more, then the exact scan), resident memory per vector, and
 * the persisted file's save and load times.
 *
 * `npx ts-node -T bench/vectors/room.ts [count]` (default 100000); appends to
 * bench/results/vectors.md. Part of `make bench` after bench/vectors/run.ts.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { exactTopK, VectorIndex, VectorStore } from '../../service/search/vectors';
import { clusteredVectors } from '../../tools/corpus/clustered-vectors';

const ROOT = join(__dirname, '..', '..');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))];
const rss = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};

/** Runs the measurement; returns its Markdown (appended to bench/results/vectors.md). */
export async function run(count = 100_000): Promise<string> {
  const dims = 384;
  const vectors = clusteredVectors({ count, dims, seed: 41 });
  const queries = clusteredVectors({ count: 100, dims, seed: 4141 });
  const q = (i: number) => queries.subarray(i * dims, (i + 1) * dims);
  const before = rss();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const index = new VectorIndex({ dims });
  // One item at a time, a turn each 1,000 (as a batch ingest would hand them over).
  for (let i = 0; i < count; i++) {
    index.add(`d${i}`, [vectors.subarray(i * dims, (i + 1) * dims)]);
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  const added = performance.now() - started;
  await index.settle();
  const built = performance.now() - started;
  loop.disable();
  const perVector = (rss() - before) / count;
  let hits = 0;
  const times: number[] = [];
  const filtered: number[] = [];
  const accept = (id: string) => Number(id.slice(1)) % 100 === 0;
  for (let i = 0; i < 100; i++) {
    const truth = new Set(exactTopK(vectors, dims, count, q(i), 10).rows);
    let s = performance.now();
    const got = index.search(q(i), 10);
    times.push(performance.now() - s);
    for (const h of got) if (truth.has(Number(h.id.slice(1)))) hits++;
    s = performance.now();
    index.search(q(i), 10, accept);
    filtered.push(performance.now() - s);
  }
  const dir = mkdtempSync(join(tmpdir(), 'vector-room-'));
  const store = new VectorStore({ dir, logger: pino({ level: 'silent' }) });
  let s = performance.now();
  await store.save(index, { key: 'bench', content: 'c' });
  const saveS = (performance.now() - s) / 1000;
  s = performance.now();
  const loaded = await store.load({ key: 'bench', content: 'c' }, { dims }, () => new VectorIndex({ dims }));
  const loadS = (performance.now() - s) / 1000;
  rmSync(dir, { recursive: true, force: true });
  const f = (x: number, d = 2) => x.toFixed(d);
  const md = [
    '',
    `### The service's VectorIndex, ${count.toLocaleString('en')} × 384 (bench/vectors/room.ts)`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}. Defaults: exact below 2,000 vectors, graph f16, 16 links, 128 candidates adding, 256 searching, slices of ~10 ms.`,
    '',
    `- added (one item at a time) in ${f(added / 1000, 1)} s; the graph held them all after ${f(built / 1000, 1)} s; **longest event-loop delay meanwhile ${f(loop.max / 1e6, 1)} ms**`,
    `- recall@10 ${f(hits / 1000, 3)}; query p50 / p99 **${f(pct(times, 50), 3)}** / ${f(pct(times, 99), 3)} ms; with a filter accepting 1 item in 100: ${f(pct(filtered, 50), 3)} / ${f(pct(filtered, 99), 3)} ms`,
    `- resident memory ${Math.round(perVector)} B a vector (the f32 copy, 1,536 B, and the f16 graph)`,
    `- persisted: save ${f(saveS)} s, load ${f(loadS)} s (${loaded.from}, graph ${loaded.graph ? 'loaded' : 'rebuilt'})`,
    '',
  ].join('\n');
  appendFileSync(join(ROOT, 'bench', 'results', 'vectors.md'), md);
  return md;
}

if (require.main === module) {
  run(Number(process.argv[2] ?? 100_000))
    .then((md) => process.stdout.write(md))
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    });
}
