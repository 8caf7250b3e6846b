/**
 * Hybrid search against keyword search (issue 41: hybrid p50 ≤ keyword p50 + 10 ms), in process,
 * over the same items: the grown Vaswani corpus with attributes (`attributedCorpus`, as the
 * filters bench builds it) in one `EmbeddedIndex`, and one clustered synthetic vector of 384
 * dimensions per item (tools/corpus/clustered-vectors.ts; the vector bench's set) in the
 * service's `VectorIndex` (usearch f16 HNSW, built to the end before timing). Per Vaswani query
 * (93; its vector drawn from the same clusters), interleaved, the median of `reps` repetitions of
 * what the search service does for a page of 10:
 *
 * - keyword: `EmbeddedIndex.search` (the page of 10 with its snippets);
 * - hybrid: the `SEARCH_SEMANTIC_CANDIDATES` (100) nearest + `meaningPage` (mode hybrid, the
 *   service's default fusion and ratio) + the page's snippets; and its parts: the vector search
 *   alone, and the keyword index's pass alone (the one the tree's `meaningPage` asks for, the
 *   candidates counted with it: 100 results by rrf; by normalized today the page's 10 and the
 *   candidates' keyword scores).
 *
 * Both with and without facets (type, tag) and a filter (type article+project). The query vector is
 * given (a cached query costs no provider call; a provider's latency is its own). Wall and CPU
 * time (`process.cpuUsage`: every thread, the GC's too) per query.
 *
 * `HYBRID_BENCH_BASE=<another checkout>`: that tree's `EmbeddedIndex` and `meaningPage` too, over
 * the same items and vectors, interleaved in the same run (the A/B). `HYBRID_BENCH_VECTORS=exact`:
 * no graph is built; each query's 100 nearest are found once by an exact scan before the timings
 * and the vector search is left out of the hybrid figures (a 1M graph takes longer to build than a
 * shared machine allows; its query time is the vector bench's).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/hybrid.ts [sizes, e.g. 100000,1000000] [reps]
 *
 * `run()` (part of `make bench`, at `VECTOR_BENCH_SIZE` documents, 100,000 by default) returns
 * the Markdown and writes bench/results/hybrid.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DEFAULT_SEARCH } from '../../configs/sections/search';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { meaningPage, type MeaningQuery } from '../../service/search/hybrid-search';
import type { IndexQuery } from '../../service/search/search-index';
import { VectorIndex } from '../../service/search/vectors';
import { clusteredVectors } from '../../tools/corpus/clustered-vectors';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { attributedCorpus } from './filters';

const DIMS = 384;
const CANDIDATES = 100;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];
const load = () => loadavg()[0].toFixed(1);

/** One tree's keyword index and hybrid page (this one, or `HYBRID_BENCH_BASE`'s). */
interface Tree {
  readonly label: string;
  readonly index: EmbeddedIndex;
  readonly meaningPage: typeof meaningPage;
}

function trees(): Tree[] {
  const out: Tree[] = [{ label: 'this', index: new EmbeddedIndex({ indexSliceMs: 1000 }), meaningPage }];
  const base = process.env.HYBRID_BENCH_BASE;
  if (base) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const idx = require(join(base, 'service/search/embedded-index')) as { EmbeddedIndex: typeof EmbeddedIndex };
    const hyb = require(join(base, 'service/search/hybrid-search')) as { meaningPage: typeof meaningPage };
    /* eslint-enable @typescript-eslint/no-require-imports */
    out.push({ label: 'base', index: new idx.EmbeddedIndex({ indexSliceMs: 1000 }), meaningPage: hyb.meaningPage });
  }
  return out;
}

/** The snippets of a page as the search service makes them (one call where the index has `snippetsOf`). */
function snippets(index: EmbeddedIndex, ids: readonly string[], text: string): string[] {
  const i = index as EmbeddedIndex & { snippetsOf?: EmbeddedIndex['snippetsOf'] };
  return i.snippetsOf ? i.snippetsOf(ids, text) : ids.map((id) => index.snippetOf(id, text));
}

async function hybridAt(v: Vaswani, size: number, reps: number, log: (l: string) => void): Promise<string[]> {
  const exact = process.env.HYBRID_BENCH_VECTORS === 'exact';
  const items = attributedCorpus(v, size);
  const ts = trees();
  let t = performance.now();
  for (const tree of ts) {
    await tree.index.replaceAll(items);
    await tree.index.settled();
    await (tree.index as unknown as { compact: { fillVocabulary(ms: number): Promise<void> } }).compact.fillVocabulary(
      1000,
    );
  }
  const keywordBuild = (performance.now() - t) / 1000 / ts.length;
  log(`${size}: keyword index in ${keywordBuild.toFixed(1)} s`);
  t = performance.now();
  const rows = clusteredVectors({ count: size, dims: DIMS, seed: 41 });
  const vectors = new VectorIndex({ dims: DIMS, sliceMs: 50, ...(exact && { exactBelow: Infinity }) });
  for (let i = 0; i < size; i++) vectors.add(items[i].id, [rows.subarray(i * DIMS, (i + 1) * DIMS)], 0);
  await vectors.settle();
  const vectorBuild = (performance.now() - t) / 1000;
  log(`${size}: vector index in ${vectorBuild.toFixed(1)} s`);
  const texts = v.queries.map((q) => q.text);
  const qv = clusteredVectors({ count: texts.length, dims: DIMS, seed: 4242 });
  const queryVector = (i: number) => qv.subarray(i * DIMS, (i + 1) * DIMS);
  const scanned = exact ? await Promise.all(texts.map((_, i) => vectors.search(queryVector(i), CANDIDATES))) : [];
  // The vector search answers from the graph's worker thread (a promise).
  const nearest = (i: number) => (exact ? Promise.resolve(scanned[i]) : vectors.search(queryVector(i), CANDIDATES));
  // The keyword pass's candidates, found before the timings.
  const candidateIds = await Promise.all(texts.map(async (_, i) => (await nearest(i)).map((h) => h.id)));
  const out: string[] = [
    `#### ${size.toLocaleString('en')} documents`,
    '',
    `- keyword index built in ${keywordBuild.toFixed(1)} s${ts.length > 1 ? ' (each tree)' : ''}, vector index (${size.toLocaleString('en')} × ${DIMS}) ${exact ? 'without a graph: the 100 nearest found by an exact scan before the timings, the vector search not in the hybrid figures' : `f16 HNSW in ${vectorBuild.toFixed(1)} s`}`,
    `- fusion ${DEFAULT_SEARCH.hybridFusion} at ratio ${DEFAULT_SEARCH.semanticRatio}, ${CANDIDATES} candidates; median of ${reps} per query, p50 / p99 over the 93 queries; wall ms (CPU ms)`,
    '',
    '| tree | queries | keyword p50 / p99 | hybrid p50 / p99 | hybrid − keyword p50 | parts p50: vector search · the keyword pass + candidates | load | max loop delay |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [label, extra] of [
    ['page of 10', {}],
    [
      'filter type article+project, facets type+tag',
      { filter: { type: ['article', 'project'] }, facets: ['type', 'tag'] },
    ],
  ] as Array<[string, Partial<IndexQuery>]>) {
    type Part = 'keyword' | 'hybrid' | 'vector' | 'pass';
    const parts: Part[] = ['keyword', 'hybrid', 'vector', 'pass'];
    const wall = ts.map(() => new Map<Part, number[]>(parts.map((p) => [p, []])));
    const cpu = ts.map(() => new Map<Part, number[]>(parts.map((p) => [p, []])));
    const loadBefore = load();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    for (let i = 0; i < texts.length; i++) {
      const per = ts.map(() => new Map<Part, Array<[number, number]>>(parts.map((p) => [p, []])));
      for (let r = 0; r < reps; r++) {
        for (let ti = 0; ti < ts.length; ti++) {
          const tree = ts[(ti + r) % ts.length];
          const at = ts.indexOf(tree);
          const idx = tree.index;
          // The keyword search the hybrid page asks for, replayed alone as the pass.
          let asked: IndexQuery | undefined;
          const hybridIndex = {
            search: (q: IndexQuery) => {
              asked = q;
              return idx.search(q);
            },
            sorted: idx.sorted.bind(idx),
          };
          const steps: Record<Part, () => Promise<unknown> | unknown> = {
            keyword: () => idx.search({ text: texts[i], limit: 10, offset: 0, ...extra }),
            hybrid: async () => {
              const q: MeaningQuery = {
                mode: 'hybrid',
                text: texts[i],
                filter: extra.filter,
                facets: extra.facets,
                limit: 10,
                offset: 0,
                nearest: await nearest(i),
                ratio: DEFAULT_SEARCH.semanticRatio,
                fusion: DEFAULT_SEARCH.hybridFusion,
                candidates: CANDIDATES,
              };
              const page = await tree.meaningPage(hybridIndex, q);
              return snippets(
                idx,
                page.hits.map((h) => h.id),
                texts[i],
              );
            },
            vector: () => (exact ? undefined : nearest(i)),
            pass: () => idx.search({ ...asked!, also: candidateIds[i] }),
          };
          for (const p of parts) {
            const c = process.cpuUsage();
            const s = performance.now();
            await steps[p]();
            const w = performance.now() - s;
            const u = process.cpuUsage(c);
            per[at].get(p)!.push([w, (u.user + u.system) / 1000]);
          }
        }
      }
      for (let ti = 0; ti < ts.length; ti++)
        for (const p of parts) {
          wall[ti].get(p)!.push(median(per[ti].get(p)!.map((x) => x[0])));
          cpu[ti].get(p)!.push(median(per[ti].get(p)!.map((x) => x[1])));
        }
    }
    delay.disable();
    const loads = `${loadBefore}–${load()}`;
    for (let ti = 0; ti < ts.length; ti++) {
      const w = wall[ti];
      const c = cpu[ti];
      const f = (p: Part) =>
        `${median(w.get(p)!).toFixed(2)} (${median(c.get(p)!).toFixed(2)}) / ${p99(w.get(p)!).toFixed(2)} (${p99(c.get(p)!).toFixed(2)})`;
      const d = (a: number[], b: number[]) => (median(a) - median(b)).toFixed(2);
      const vector = exact
        ? 'not timed'
        : `${median(w.get('vector')!).toFixed(2)} (${median(c.get('vector')!).toFixed(2)})`;
      out.push(
        `| ${ts[ti].label} | ${label} | ${f('keyword')} | ${f('hybrid')} | +${d(w.get('hybrid')!, w.get('keyword')!)} (+${d(c.get('hybrid')!, c.get('keyword')!)}) | ${vector} · ${median(w.get('pass')!).toFixed(2)} (${median(c.get('pass')!).toFixed(2)}) | ${loads} | ${(delay.max / 1e6).toFixed(0)} ms |`,
      );
      log(out[out.length - 1]);
    }
  }
  vectors.close();
  return out;
}

/** The hybrid bench at each size; writes bench/results/hybrid.md. */
export async function run(sizes: readonly number[] = [100_000], reps = 3): Promise<string> {
  const v = loadVaswani();
  const lines = ['### Hybrid against keyword search (issue 41), in process', ''];
  for (const size of sizes) lines.push(...(await hybridAt(v, size, reps, (l) => process.stderr.write(`${l}\n`))), '');
  const md = lines.join('\n');
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hybrid.md'), `${md}\n`);
  return md;
}

if (require.main === module) {
  const [sizesArg, repsArg] = process.argv.slice(2);
  run((sizesArg ?? '100000').split(',').map(Number), Number(repsArg ?? 3)).then(
    (md) => process.stdout.write(`${md}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
