/**
 * The vector index of the service (service/search/vectors/) as it runs: `count` clustered vectors
 * of 384 dimensions added one item at a time, the graph fed in the background in ~10 ms slices;
 * the longest turn of the event loop meanwhile, as wall-clock delay (`monitorEventLoopDelay`) and
 * as CPU time of the loop's thread (service/metrics/event-loop-delay.ts: on a machine shared with
 * other work the wall clock also counts the time the thread waited for a core), the time until the
 * graph holds everything, resident memory per vector, and the persisted files. Then a restart as
 * the service does it (a `SemanticIndex` over the same items, its store in the folder): how long
 * its `start()` holds the service's readiness against the same start without vectors, how long
 * until the graph answers (each step of the load), and the first query. On the restarted index:
 * recall@10 against the exact scan (strict, and with ann-benchmarks' tolerance: a result as close
 * as the 10th true neighbour within 0.001 counts) and query p50/p99 at several numbers of search
 * candidates on the one graph (`VECTOR_BENCH_EF`, default `64,96,128,256`: ef is a search's
 * setting, not the graph's), each as the time the caller awaits and as CPU (the loop thread's, and
 * the whole process's: the rest is the graph's worker thread), and with a filter accepting 1 item
 * in 100.
 *
 * `npx ts-node -T bench/vectors/room.ts [count]` (default 100000); appends to
 * bench/results/vectors.md. Part of `make bench` after bench/vectors/run.ts. Graph settings from
 * `VECTOR_BENCH_GRAPH` (e.g. `connectivity=32,expansionAdd=128,expansionSearch=256`), else the
 * index's defaults; clusters from `VECTOR_BENCH_CLUSTERS`, else `clustersFor(count)` (1,000 from
 * 5,000 vectors on: 100 vectors a cluster at 100,000, 1,000 at 1M; 100 clusters at 100,000 give
 * the 1M set's neighbourhoods at a tenth of the build). `VECTOR_BENCH_DIR=<folder>` keeps the
 * persisted build there and reuses it on the next run (restart and searches only: minutes at 1M
 * instead of the build's tens of minutes; `VECTOR_BENCH_REBUILD=1` builds again); without it the
 * files go to a temporary folder, removed at the end unless `VECTOR_BENCH_KEEP` is set.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { monitorEventLoop, loopThreadCpu } from '../../service/metrics/event-loop-delay';
import type { ItemVectors, VectorFeed } from '../../service/embeddings';
import { contentKey, SemanticIndex } from '../../service/search/semantic-index';
import { SEMANTIC_START_WAIT_MS } from '../../service/search/semantic-search';
import { exactTopK, type GraphOptions, VectorIndex, VectorStore } from '../../service/search/vectors';
import { DEFAULT_EXPANSION_SEARCH } from '../../service/search/vectors/hnsw-graph';
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

/** The longest loop-thread CPU turn, as a monitor started now reports it when `done` settles. */
async function busiestTurn<T>(done: () => Promise<T>): Promise<{ value: T; busyMaxMs: number }> {
  const loop = monitorEventLoop(1);
  try {
    const value = await done();
    return { value, busyMaxMs: loop.take().busyMax * 1000 };
  } finally {
    loop.stop();
  }
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
  const f = (x: number, d = 2) => x.toFixed(d);
  const lines: string[] = [];
  // The items as the service's vector feed gives them at a start (one vector each, fingerprint 0).
  const items: ItemVectors[] = Array.from({ length: count }, (_, i) => ({
    id: `d${i}`,
    fingerprint: 0,
    source: 'client',
    vectors: [vectors.subarray(i * dims, (i + 1) * dims)],
  }));
  const key = `bench/seed41-clusters${clusters}/${count}`;
  const content = contentKey(items);
  const given = process.env.VECTOR_BENCH_DIR;
  const dir = given ?? mkdtempSync(join(tmpdir(), 'vector-room-'));
  mkdirSync(dir, { recursive: true });
  // The store's own log lines: its load says how long each step took.
  const logged: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const store = new VectorStore({ dir, logger });
  const reuse = given !== undefined && existsSync(store.file) && !process.env.VECTOR_BENCH_REBUILD;
  if (!reuse) {
    const before = rss();
    const wall = monitorEventLoopDelay({ resolution: 1 });
    wall.enable();
    const cpu = monitorEventLoop(1);
    const started = performance.now();
    const index = new VectorIndex({ dims, graph });
    // One item at a time, a turn each 1,000 (as a batch ingest would hand them over).
    for (let i = 0; i < count; i++) {
      index.add(`d${i}`, items[i].vectors);
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    const added = performance.now() - started;
    await index.settle();
    const built = performance.now() - started;
    wall.disable();
    const loopCpu = cpu.take();
    cpu.stop();
    const perVector = (rss() - before) / count;
    const s = performance.now();
    await store.save(index, { key, content });
    const saveS = (performance.now() - s) / 1000;
    const files = readdirSync(dir).map(
      (n) => `${n.replace(/\..*?\./, '.*.')} ${(statSync(join(dir, n)).size / count).toFixed(0)} B`,
    );
    index.close();
    lines.push(
      `- built: added (one item at a time) in ${f(added / 1000, 1)} s; the graph held them all after **${f(built / 1000, 1)} s**; longest turn of the event loop meanwhile: **${f(loopCpu.busyMax * 1000, 1)} ms of the loop thread's CPU**, ${f(wall.max / 1e6, 1)} ms of wall clock`,
      `- resident memory **${Math.round(perVector)} B a vector** after the build (the f32 rows, 1,536 B, and the graph)`,
      `- persisted: save ${f(saveS)} s (${files.join(', ')} a vector)`,
    );
  } else lines.push(`- the build persisted in \`${dir}\` by an earlier run, reused (\`VECTOR_BENCH_DIR\`)`);

  // A restart as the service does it: a SemanticIndex over the same items, its store in the folder,
  // waiting at most SEMANTIC_START_WAIT_MS; against the same start with no vectors.
  const empty = new SemanticIndex({ feed: feedOf([]), dims, key, store, startWaitMs: SEMANTIC_START_WAIT_MS });
  let s = performance.now();
  await empty.start();
  const emptyStartMs = performance.now() - s;
  empty.close();
  const beforeLoad = rss();
  const semantic = new SemanticIndex({
    feed: feedOf(items),
    dims,
    key,
    store,
    logger,
    vectors: { graph },
    startWaitMs: SEMANTIC_START_WAIT_MS,
  });
  const cpu0 = process.cpuUsage();
  s = performance.now();
  let startMs = 0;
  const { busyMaxMs: loadBusyMs } = await busiestTurn(async () => {
    await semantic.start();
    startMs = performance.now() - s;
    await semantic.loaded();
  });
  const loadedS = (performance.now() - s) / 1000;
  const loadCpu = process.cpuUsage(cpu0);
  s = performance.now();
  await semantic.nearest(q(0), 10);
  const firstQueryMs = performance.now() - s;
  const loadedPerVector = (rss() - beforeLoad) / count;
  const read = logged.find((l) => l.msg === 'persisted vector index read');
  const steps = read?.steps as Record<string, number> | undefined;
  lines.push(
    `- **restart** (a \`SemanticIndex\` start over the same ${count.toLocaleString('en')} items, its store in the folder, as the service starts): \`start()\` returned after **${f(startMs, 0)} ms** (the same start without vectors: ${f(emptyStartMs, 1)} ms; the service waits for it before ready, at most \`SEMANTIC_START_WAIT_MS\` = ${SEMANTIC_START_WAIT_MS} ms); loaded from ${semantic.origin}${read ? `, graph ${read.graph ? 'loaded' : 'rebuilt'}` : ''} after **${f(loadedS, 1)} s**, ${f((loadCpu.user + loadCpu.system) / 1e6, 1)} s of process CPU (${
      steps
        ? Object.entries(steps)
            .map(([k, v]) => `${k} ${f(v / 1000)} s`)
            .join(', ')
        : 'no steps logged'
    }); longest loop-thread CPU turn meanwhile ${f(loadBusyMs, 1)} ms; the first semantic query after it ${f(firstQueryMs, 1)} ms; resident memory of the loaded index ${Math.round(loadedPerVector)} B a vector`,
  );

  // The searches, on the restarted index (the graph read from its file).
  const index = (semantic as unknown as { index: VectorIndex }).index;
  await index.settle();
  const gaps: number[] = [];
  const truths: Array<{ rows: Set<number>; tenth: number }> = [];
  for (let i = 0; i < QUERIES; i++) {
    const exact = exactTopK(vectors, dims, count, q(i), 11);
    truths.push({ rows: new Set(Array.from(exact.rows.subarray(0, 10))), tenth: exact.scores[9] });
    gaps.push(exact.scores[9] - exact.scores[10]);
  }
  const accept = (id: string) => Number(id.slice(1)) % 100 === 0;
  const threadCpu = loopThreadCpu();
  const efs = (process.env.VECTOR_BENCH_EF ?? '64,96,128,256').split(',').map(Number);
  const defaultEf = graph.expansionSearch ?? DEFAULT_EXPANSION_SEARCH;
  const sweep: string[] = [];
  let filtered: number[] = [];
  for (const ef of efs) {
    index.expansionSearch = ef;
    let hits = 0;
    let hitsTolerant = 0;
    const times: number[] = [];
    const loopMs: number[] = [];
    const processMs: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const c0 = process.cpuUsage();
      const l0 = threadCpu();
      const t = performance.now();
      const got = await index.search(q(i), 10);
      times.push(performance.now() - t);
      loopMs.push((threadCpu() - l0) * 1000);
      const c = process.cpuUsage(c0);
      processMs.push((c.user + c.system) / 1000);
      for (const h of got) {
        const row = Number(h.id.slice(1));
        if (truths[i].rows.has(row)) hits++;
        // The true similarity (not the graph's f16 one) against the 10th's.
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += vectors[row * dims + d] * queries[i * dims + d];
        if (dot >= truths[i].tenth - EPSILON) hitsTolerant++;
      }
    }
    const mark = ef === defaultEf ? '**' : '';
    sweep.push(
      `| ${mark}${ef}${mark} | ${mark}${f(hits / (QUERIES * 10), 3)}${mark} | ${f(hitsTolerant / (QUERIES * 10), 3)} | ${mark}${f(pct(times, 50), 3)}${mark} / ${f(pct(times, 99), 3)} | ${f(pct(loopMs, 50), 3)} | ${f(pct(processMs, 50), 3)} |`,
    );
    if (ef === defaultEf || filtered.length === 0) {
      filtered = [];
      for (let i = 0; i < QUERIES; i++) {
        const t = performance.now();
        await index.search(q(i), 10, accept);
        filtered.push(performance.now() - t);
      }
    }
  }
  // As the service asks: SEARCH_SEMANTIC_CANDIDATES (100) items, so 200 neighbours of the graph.
  index.expansionSearch = graph.expansionSearch;
  const hundred: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now();
    await index.search(q(i), 100);
    hundred.push(performance.now() - t);
  }
  semantic.close();
  if (!given && !process.env.VECTOR_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  const g = new VectorIndex({ dims, graph }).graphKey;
  const md = [
    '',
    `### The service's VectorIndex, ${count.toLocaleString('en')} × 384 (bench/vectors/room.ts)`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}. Exact below 2,000 vectors, graph \`${g}\`, ${defaultEf} candidates searching by default, slices of ~10 ms; ${clusters.toLocaleString('en')} clusters, ${QUERIES} queries in them.`,
    '',
    ...lines,
    `- searches on the restarted index: the exact 10th and 11th neighbours differ by ${f(pct(gaps, 50), 4)} in cosine (median); with a filter accepting 1 item in 100 (ef ${efs.includes(defaultEf) ? defaultEf : efs[0]}): p50 / p99 ${f(pct(filtered, 50), 3)} / ${f(pct(filtered, 99), 3)} ms. By search candidates (ef; the default in bold), queries one after the other: the time the caller awaits (a round trip to the graph's worker thread), and the CPU of the loop's thread and of the whole process (the rest is the worker's):`,
    '',
    `| ef | recall@10 | with tolerance ${EPSILON} | awaited p50 / p99, ms | loop thread CPU p50, ms | process CPU p50, ms |`,
    '| --: | --: | --: | --: | --: | --: |',
    ...sweep,
    '',
    `- 100 items a query (the service's \`SEARCH_SEMANTIC_CANDIDATES\`: the graph asked for 200 neighbours, more than ef), awaited p50 / p99: ${f(pct(hundred, 50), 3)} / ${f(pct(hundred, 99), 3)} ms`,
    '',
  ].join('\n');
  appendFileSync(join(ROOT, 'bench', 'results', 'vectors.md'), md);
  return md;
}

/** A vector feed holding `items`, unchanging (what a start reads). */
function feedOf(items: readonly ItemVectors[]): VectorFeed {
  return {
    current: () => items,
    subscribe: () => () => undefined,
    pending: () => 0,
    status: () => (items.length > 0 ? 'ok' : 'off'),
  };
}

if (require.main === module) {
  run(Number(process.argv[2] ?? 100_000))
    .then((md) => process.stdout.write(md))
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    });
}
