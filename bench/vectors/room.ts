/**
 * The vector index of the service (service/search/vectors/) as it runs: `count` clustered vectors
 * of 384 dimensions added one item at a time, the graph fed in the background in ~10 ms slices;
 * the longest turn of the event loop meanwhile, as wall-clock delay (`monitorEventLoopDelay`) and
 * as CPU time of the loop's thread (service/metrics/event-loop-delay.ts: on a machine shared with
 * other work the wall clock also counts the time the thread waited for a core), the time until the
 * graph holds everything, recall@10 against the exact scan (strict, and with ann-benchmarks'
 * tolerance: a result as close as the 10th true neighbour within 0.001 counts) and query p50/p99
 * (graph, and a filter accepting 1 item in 100), resident memory per vector, and the persisted
 * files: save, then load as at a restart (read, both checksums, rows copied, graph loaded), and
 * the first query after it.
 *
 * `npx ts-node -T bench/vectors/room.ts [count]` (default 100000); appends to
 * bench/results/vectors.md. Part of `make bench` after bench/vectors/run.ts. Graph settings from
 * `VECTOR_BENCH_GRAPH` (e.g. `connectivity=32,expansionAdd=128,expansionSearch=256`), else the
 * index's defaults; clusters from `VECTOR_BENCH_CLUSTERS`, else `clustersFor(count)` (1,000 from
 * 5,000 vectors on: 100 vectors a cluster at 100,000, 1,000 at 1M; 100 clusters at 100,000 give
 * the 1M set's neighbourhoods at a tenth of the build).
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { monitorEventLoop } from '../../service/metrics/event-loop-delay';
import { exactTopK, type GraphOptions, VectorIndex, VectorStore } from '../../service/search/vectors';
import { clusteredVectors, clustersFor } from '../../tools/corpus/clustered-vectors';

const ROOT = join(__dirname, '..', '..');
const QUERIES = 100;
/** ann-benchmarks' tolerance: a result within this of the 10th true neighbour's similarity counts. */
const EPSILON = 1e-3;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))];
const rss = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};

function graphOptions(): GraphOptions {
  const out: Record<string, number | string> = {};
  for (const kv of (process.env.VECTOR_BENCH_GRAPH ?? '').split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    out[k] = k === 'quantization' ? v : Number(v);
  }
  return out as GraphOptions;
}

/** Runs the measurement; returns its Markdown (appended to bench/results/vectors.md). */
export async function run(count = 100_000): Promise<string> {
  const dims = 384;
  const graph = graphOptions();
  const clusters = Number(process.env.VECTOR_BENCH_CLUSTERS ?? clustersFor(count));
  const vectors = clusteredVectors({ count, dims, seed: 41, clusters });
  // In the set's clusters (tools/corpus/clustered-vectors.ts: clustersFor).
  const queries = clusteredVectors({ count: QUERIES, dims, seed: 4141, clusters });
  const q = (i: number) => queries.subarray(i * dims, (i + 1) * dims);
  const before = rss();
  const wall = monitorEventLoopDelay({ resolution: 1 });
  wall.enable();
  const cpu = monitorEventLoop(1);
  const started = performance.now();
  const index = new VectorIndex({ dims, graph });
  // One item at a time, a turn each 1,000 (as a batch ingest would hand them over).
  for (let i = 0; i < count; i++) {
    index.add(`d${i}`, [vectors.subarray(i * dims, (i + 1) * dims)]);
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  const added = performance.now() - started;
  await index.settle();
  const built = performance.now() - started;
  wall.disable();
  const loopCpu = cpu.take();
  cpu.stop();
  const perVector = (rss() - before) / count;
  let hits = 0;
  let hitsTolerant = 0;
  const gaps: number[] = [];
  const times: number[] = [];
  const filtered: number[] = [];
  const accept = (id: string) => Number(id.slice(1)) % 100 === 0;
  for (let i = 0; i < QUERIES; i++) {
    const exact = exactTopK(vectors, dims, count, q(i), 11);
    const truth = new Set(Array.from(exact.rows.subarray(0, 10)));
    const tenth = exact.scores[9];
    gaps.push(tenth - exact.scores[10]);
    let s = performance.now();
    const got = await index.search(q(i), 10);
    times.push(performance.now() - s);
    for (const h of got) {
      const row = Number(h.id.slice(1));
      if (truth.has(row)) hits++;
      // The true similarity (not the graph's f16 one) against the 10th's.
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += vectors[row * dims + d] * queries[i * dims + d];
      if (dot >= tenth - EPSILON) hitsTolerant++;
    }
    s = performance.now();
    await index.search(q(i), 10, accept);
    filtered.push(performance.now() - s);
  }
  const dir = mkdtempSync(join(tmpdir(), 'vector-room-'));
  const store = new VectorStore({ dir, logger: pino({ level: 'silent' }) });
  let s = performance.now();
  await store.save(index, { key: 'bench', content: 'c' });
  const saveS = (performance.now() - s) / 1000;
  const files = readdirSync(dir).map(
    (n) => `${n.replace(/\..*?\./, '.*.')} ${(statSync(join(dir, n)).size / count).toFixed(0)} B`,
  );
  index.close();
  s = performance.now();
  const cpu0 = process.cpuUsage();
  const loadLoop = monitorEventLoop(1);
  const loaded = await store.load({ key: 'bench', content: 'c' }, { dims, graph }, () => new VectorIndex({ dims }));
  const loadS = (performance.now() - s) / 1000;
  const loadCpu = process.cpuUsage(cpu0);
  // The loop thread's own CPU while loading (the rest, the graph's read, is its worker thread's).
  const loadLoopCpu = loadLoop.take();
  loadLoop.stop();
  const loadCpuS = (loadCpu.user + loadCpu.system) / 1e6;
  s = performance.now();
  await loaded.index.search(q(0), 10);
  const firstQueryMs = performance.now() - s;
  if (!process.env.VECTOR_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  const f = (x: number, d = 2) => x.toFixed(d);
  const g = new VectorIndex({ dims, graph }).graphKey;
  const md = [
    '',
    `### The service's VectorIndex, ${count.toLocaleString('en')} × 384 (bench/vectors/room.ts)`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}. Exact below 2,000 vectors, graph \`${g}\`, ${graph.expansionSearch ?? 256} candidates searching, slices of ~10 ms; ${clusters.toLocaleString('en')} clusters, ${QUERIES} queries in them.`,
    '',
    `- added (one item at a time) in ${f(added / 1000, 1)} s; the graph held them all after **${f(built / 1000, 1)} s**; longest turn of the event loop meanwhile: **${f(loopCpu.busyMax * 1000, 1)} ms of the loop thread's CPU**, ${f(wall.max / 1e6, 1)} ms of wall clock`,
    `- recall@10 **${f(hits / (QUERIES * 10), 3)}** (ann-benchmarks' tolerance of ${EPSILON}: ${f(hitsTolerant / (QUERIES * 10), 3)}); the exact 10th and 11th neighbours differ by ${f(pct(gaps, 50), 4)} in cosine (median); query p50 / p99 **${f(pct(times, 50), 3)}** / ${f(pct(times, 99), 3)} ms; with a filter accepting 1 item in 100: ${f(pct(filtered, 50), 3)} / ${f(pct(filtered, 99), 3)} ms`,
    `- resident memory **${Math.round(perVector)} B a vector** (the f32 copy, 1,536 B, and the f16 graph)`,
    `- persisted: save ${f(saveS)} s (${files.join(', ')} a vector); **load ${f(loadS)} s, ${f(loadCpuS)} s of CPU** (${loaded.from}, graph ${loaded.graph ? 'loaded' : 'rebuilt'}, in its worker thread; read, both checksums), longest loop-thread CPU turn meanwhile ${f(loadLoopCpu.busyMax * 1000, 1)} ms; first query after it ${f(firstQueryMs, 1)} ms. A start of the service waits for this load at most 1 s (\`SEMANTIC_START_WAIT_MS\`), then answers by keyword until it ends`,
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
