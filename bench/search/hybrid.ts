/**
 * Hybrid search against keyword search (issue 41: hybrid p50 ≤ keyword p50 + 10 ms), in process,
 * over the same items: the grown Vaswani corpus with attributes (`attributedCorpus`, as the
 * filters bench builds it) in one `EmbeddedIndex`, and one clustered synthetic vector of 384
 * dimensions per item (tools/corpus/clustered-vectors.ts; the vector bench's set) in the
 * service's `VectorIndex` (usearch f16 HNSW, built to the end before timing). Per Vaswani query
 * (93; its vector drawn from the same clusters), interleaved, the median of `reps` repetitions of:
 *
 * - keyword: `EmbeddedIndex.search` (the page of 10, no snippets);
 * - semantic: the `SEARCH_SEMANTIC_CANDIDATES` (100) nearest + `meaningPage` (mode semantic);
 * - hybrid: the 100 nearest + `meaningPage` (mode hybrid, rrf, ratio 0.5): the keyword search
 *   asked for 100 results and the candidates counted with it, then fused; and the same with only
 *   the first 20 keyword results fused (what a shallower keyword list would save).
 *
 * Both with and without facets (type, tag) and a filter (type article+project). The query vector is
 * given (a cached query costs no provider call; a provider's latency is its own). Snippets are
 * left out of every mode (they cost the same page of 10 in each).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/hybrid.ts [sizes, e.g. 100000,1000000] [reps]
 *
 * `run()` (part of `make bench`, 100,000 documents) returns the Markdown and writes bench/results/hybrid.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { meaningPage, type MeaningQuery } from '../../service/search/hybrid-search';
import type { IndexQuery } from '../../service/search/search-index';
import { VectorIndex } from '../../service/search/vectors';
import { clusteredVectors } from '../../tools/corpus/clustered-vectors';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { attributedCorpus } from './filters';

const DIMS = 384;
const CANDIDATES = 100;
const MODES = ['keyword', 'semantic', 'hybrid', 'hybrid20'] as const;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.9) - 1)];

async function hybridAt(v: Vaswani, size: number, reps: number, log: (l: string) => void): Promise<string[]> {
  const items = attributedCorpus(v, size);
  const index = new EmbeddedIndex({ indexSliceMs: 1000 });
  let t = performance.now();
  await index.replaceAll(items);
  await index.settled();
  await (index as unknown as { compact: { fillVocabulary(ms: number): Promise<void> } }).compact.fillVocabulary(1000);
  const keywordBuild = (performance.now() - t) / 1000;
  log(`${size}: keyword index in ${keywordBuild.toFixed(1)} s`);
  t = performance.now();
  const rows = clusteredVectors({ count: size, dims: DIMS, seed: 41 });
  const vectors = new VectorIndex({ dims: DIMS, sliceMs: 50 });
  for (let i = 0; i < size; i++) vectors.add(items[i].id, [rows.subarray(i * DIMS, (i + 1) * DIMS)], 0);
  await vectors.settle();
  const vectorBuild = (performance.now() - t) / 1000;
  log(`${size}: vector index in ${vectorBuild.toFixed(1)} s`);
  const texts = v.queries.map((q) => q.text);
  const qv = clusteredVectors({ count: texts.length, dims: DIMS, seed: 4242 });
  const queryVector = (i: number) => qv.subarray(i * DIMS, (i + 1) * DIMS);
  const hybridIndex = { search: (q: IndexQuery) => index.search(q), sorted: index.sorted.bind(index) };
  const out: string[] = [
    `#### ${size.toLocaleString('en')} documents`,
    '',
    `- keyword index built in ${keywordBuild.toFixed(1)} s, vector index (${size.toLocaleString('en')} × ${DIMS}, f16 HNSW) in ${vectorBuild.toFixed(1)} s`,
    '',
    '| queries | keyword p50 / p90 | semantic p50 / p90 | hybrid p50 / p90 | hybrid − keyword p50 | hybrid, 20 keyword results fused: p50 / p90 | max loop delay |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [label, extra] of [
    ['93 Vaswani queries, page of 10', {}],
    [
      'the same, filter type article+project, facets type+tag',
      { filter: { type: ['article', 'project'] }, facets: ['type', 'tag'] },
    ],
  ] as Array<[string, Partial<IndexQuery>]>) {
    const times = {
      keyword: [] as number[],
      semantic: [] as number[],
      hybrid: [] as number[],
      hybrid20: [] as number[],
    };
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    for (let i = 0; i < texts.length; i++) {
      const per = {
        keyword: [] as number[],
        semantic: [] as number[],
        hybrid: [] as number[],
        hybrid20: [] as number[],
      };
      for (let r = 0; r < reps; r++) {
        for (const mode of MODES) {
          const s = performance.now();
          if (mode === 'keyword')
            await index.search({ text: texts[i], limit: 10, offset: 0, snippets: false, ...extra });
          else {
            const q: MeaningQuery = {
              mode: mode === 'hybrid20' ? 'hybrid' : mode,
              text: texts[i],
              filter: extra.filter,
              facets: extra.facets,
              limit: 10,
              offset: 0,
              nearest: await vectors.search(queryVector(i), CANDIDATES),
              ratio: 0.5,
              fusion: 'rrf',
              candidates: mode === 'hybrid20' ? 20 : CANDIDATES,
            };
            await meaningPage(hybridIndex, q);
          }
          per[mode].push(performance.now() - s);
        }
      }
      for (const mode of MODES) times[mode].push(median(per[mode]));
    }
    delay.disable();
    const f = (xs: number[]) => `${median(xs).toFixed(2)} / ${p90(xs).toFixed(2)} ms`;
    out.push(
      `| ${label} | ${f(times.keyword)} | ${f(times.semantic)} | ${f(times.hybrid)} | ${(median(times.hybrid) - median(times.keyword)).toFixed(2)} ms | ${f(times.hybrid20)} | ${(delay.max / 1e6).toFixed(0)} ms |`,
    );
    log(out[out.length - 1]);
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
