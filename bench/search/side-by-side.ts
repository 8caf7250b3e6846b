/**
 * Search in process as the corpus grows, side by side: the service's index with MaxScore pruning
 * (after issue 16) and with exhaustive scoring (before), and the peer libraries of `peers.ts`,
 * each built over the same grown Vaswani corpus and asked the same queries in one run. Per engine
 * and size: build time, heap per document, full and 2-word latency (limit 10; per query the
 * median of `reps` interleaved repetitions, then p50/p99 over queries) and nDCG@10 against the
 * Vaswani judgments (grown copies are unjudged, so they count as non-relevant).
 */
import type { Item } from '../../service/content/item';
import { evaluateQuery, meanMetrics } from '../../service/eval/relevance-measures';
import { ExhaustiveIndex } from '../../tools/oracles/exhaustive-index';
import { growCorpus, twoWordQueries, type CorpusItem } from '../../tools/corpus/grow-corpus';
import { flexSearchEngine, miniSearchEngine, winkEngine, type SearchEngine } from './peers';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

/**
 * Sizes of the in-process corpora (grown from Vaswani by `grow-corpus.ts`): `SEARCH_BENCH_SIZES`,
 * comma-separated, default 11,429 (the collection), 50,000 and 200,000.
 */
export function benchSizes(env: NodeJS.ProcessEnv = process.env): number[] {
  const raw = env.SEARCH_BENCH_SIZES ?? '11429,50000,200000';
  return raw.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`SEARCH_BENCH_SIZES: '${s}' is not a positive integer (e.g. 11429,50000,200000)`);
    return n;
  });
}

/** The service's `EmbeddedIndex` with default ranking, pruned, or the exhaustive oracle's scoring of the same index. */
export function serviceEngine(pruning: boolean): SearchEngine {
  let index: ExhaustiveIndex | undefined;
  const now = new Date(0).toISOString();
  return {
    name: pruning ? 'service index, MaxScore (after)' : 'service index, exhaustive (before)',
    async build(items) {
      index = new ExhaustiveIndex({ indexSliceMs: 1000 });
      await index.replaceAll(
        items.map((i): Item => ({ ...i, type: 'article', tags: [], created_at: now, updated_at: now })),
      );
    },
    async search(text, k) {
      const query = { text, limit: k, offset: 0, snippets: false };
      return (pruning ? await index!.search(query) : index!.exhaustive(query)).hits.map((h) => h.id);
    },
  };
}

/** Every engine of the comparison, in report order. */
export function engines(): Array<() => SearchEngine> {
  return [() => serviceEngine(true), () => serviceEngine(false), miniSearchEngine, winkEngine, flexSearchEngine];
}

/** Latency percentiles, milliseconds. */
export interface Latency {
  readonly p50: number;
  readonly p99: number;
}

/** One engine at one corpus size. */
export interface EngineRun {
  readonly engine: string;
  readonly docs: number;
  readonly buildSeconds: number;
  /** Growth of `heapUsed` from before the build to after the queries (caches included), bytes per document. */
  readonly heapPerDoc: number;
  readonly full: Latency;
  readonly short: Latency;
  readonly ndcg10: number;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];
// Twice: one full collection can leave what the previous engine's finalizers released.
const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  collect?.();
};

async function time(
  engine: SearchEngine,
  texts: readonly string[],
  short: boolean,
  reps: number,
): Promise<{ latency: Latency; runs: string[][] }> {
  const perQuery: number[][] = texts.map(() => []);
  const runs: string[][] = texts.map(() => []);
  // Repetitions interleaved across queries, so a noisy moment spreads over all of them.
  for (let r = 0; r < reps; r++) {
    for (const [i, text] of texts.entries()) {
      const s = performance.now();
      runs[i] = await engine.search(text, 10, short);
      perQuery[i].push(performance.now() - s);
    }
  }
  const medians = perQuery.map(median);
  return { latency: { p50: median(medians), p99: p99(medians) }, runs };
}

/** Builds and times one engine over `items`. */
export async function measure(
  make: () => SearchEngine,
  v: Vaswani,
  items: readonly CorpusItem[],
  reps: number,
): Promise<EngineRun> {
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const engine = make();
  const t0 = performance.now();
  await engine.build(items);
  const buildSeconds = (performance.now() - t0) / 1000;
  const texts = v.queries.map((q) => q.text);
  const full = await time(engine, texts, false, reps);
  const short = await time(engine, twoWordQueries(texts), true, reps);
  gc();
  const heapPerDoc = (process.memoryUsage().heapUsed - heap0) / items.length;
  const ndcg10 = meanMetrics(
    v.queries.map((q, i) =>
      evaluateQuery(
        full.runs[i].map((id, rank) => ({ id, score: -rank })),
        v.qrels.get(q.qid) ?? new Map(),
        10,
      ),
    ),
  ).ndcg;
  return {
    engine: engine.name,
    docs: items.length,
    buildSeconds,
    heapPerDoc,
    full: full.latency,
    short: short.latency,
    ndcg10,
  };
}

/** Every engine at every size, one engine in memory at a time. */
export async function sideBySide(
  v: Vaswani,
  sizes: readonly number[],
  reps: number,
  log: (line: string) => void = () => undefined,
): Promise<EngineRun[]> {
  const out: EngineRun[] = [];
  for (const size of sizes) {
    const items = growCorpus(v.items, size);
    for (const make of engines()) {
      const run = await measure(make, v, items, reps);
      log(
        `${run.docs} ${run.engine}: full ${run.full.p50.toFixed(2)} ms, 2-word ${run.short.p50.toFixed(2)} ms, ${(run.heapPerDoc / 1024).toFixed(2)} KB/doc, nDCG@10 ${run.ndcg10.toFixed(4)}`,
      );
      out.push(run);
    }
  }
  return out;
}

/** The Markdown table of `runs`, with each engine's ratio to the service's pruned index at the same size. */
export function sideBySideTable(runs: readonly EngineRun[]): string[] {
  const ratio = (x: number, ref: number) => `${(x / ref).toFixed(1)}×`;
  const lines = [
    '| docs | engine | full p50 / p99 | 2-word p50 / p99 | full p50 vs ours | 2-word p50 vs ours | heap per doc | build | nDCG@10 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of runs) {
    const ours = runs.find((o) => o.docs === r.docs && o.engine.includes('MaxScore')) ?? r;
    lines.push(
      `| ${r.docs.toLocaleString('en')} | ${r.engine} | ${r.full.p50.toFixed(2)} / ${r.full.p99.toFixed(1)} ms | ${r.short.p50.toFixed(2)} / ${r.short.p99.toFixed(1)} ms | ${ratio(r.full.p50, ours.full.p50)} | ${ratio(r.short.p50, ours.short.p50)} | ${(r.heapPerDoc / 1024).toFixed(2)} KB | ${r.buildSeconds.toFixed(1)} s | ${r.ndcg10.toFixed(4)} |`,
    );
  }
  return lines;
}

if (require.main === module) {
  sideBySide(loadVaswani(), benchSizes(), 7, (l) => process.stderr.write(`${l}\n`)).then(
    (runs) => process.stdout.write(`${sideBySideTable(runs).join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
