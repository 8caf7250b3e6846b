/**
 * How many array buffers (typed arrays with their own backing store) and bytes a query makes, by
 * kind (full RM3, faceted full, 2-word, filtered, browse), on the filters bench's corpus, with the
 * code sites that make most of them (sampled). Needs the counting preload:
 *
 *   node --expose-gc -r ts-node/register/transpile-only -r ./bench/search/array-buffer-count.ts bench/search/array-buffers.ts [size] [sites] [kinds]
 *
 * Each kind is asked twice over its queries to warm (caches, columns, term values: a term first
 * used without its values kept gets them at its second use), then counted over a third pass. Timings under the preload mean nothing; only counts are reported.
 */
import { queryObjects } from 'node:v8';
import type { ArrayBufferCounts } from './array-buffer-count';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import type { IndexQuery } from '../../service/search/search-index';
import { twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { attributedCorpus, q } from './filters';

const counter = (globalThis as { __arrayBufferCounts?: { get(): ArrayBufferCounts; reset(): void } })
  .__arrayBufferCounts;

/** Live `ArrayBuffer` objects (each with a backing store and an extension V8's sweeper visits), after a full GC. */
const liveBuffers = (): string =>
  `live ArrayBuffers ${(queryObjects(ArrayBuffer, { format: 'count' }) as number).toLocaleString('en')}, SharedArrayBuffers ${(queryObjects(SharedArrayBuffer, { format: 'count' }) as number).toLocaleString('en')}, arrayBuffers ${(process.memoryUsage().arrayBuffers / 1e6).toFixed(1)} MB`;

async function main(): Promise<void> {
  if (!counter) throw new Error('run with -r ./bench/search/array-buffer-count.ts');
  const [sizeArg, sitesArg, kindsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const size = Number(sizeArg ?? 200_000);
  const topSites = Number(sitesArg ?? 12);
  const v = loadVaswani();
  const items = attributedCorpus(v, size);
  counter.reset();
  const index = new EmbeddedIndex({ indexSliceMs: 1000 });
  await index.replaceAll(items);
  await index.settled();
  await (index as unknown as { compact: { fillVocabulary(ms: number): Promise<void> } }).compact.fillVocabulary(1000);
  const built = counter.get();
  process.stdout.write(
    `${size}: indexing made ${built.buffers.toLocaleString('en')} buffers, ${(built.bytes / 1e6).toFixed(1)} MB (≥ 64 kB: ${built.large.toLocaleString('en')}, ${(built.largeBytes / 1e6).toFixed(1)} MB); ${liveBuffers()}\n`,
  );
  const texts = v.queries.map((x) => x.text);
  const kinds: Array<[string, IndexQuery[]]> = [
    ['full RM3', texts.map((t) => q(t))],
    ['faceted full (type, tag)', texts.map((t) => q(t, { facets: ['type', 'tag'] }))],
    ['2-word', twoWordQueries(texts).map((t) => q(t))],
    ['full, type article+project', texts.map((t) => q(t, { filter: { type: ['article', 'project'] } }))],
    ['full, a year', texts.map((t) => q(t, { filter: { date_from: '2020-01-01', date_to: '2020-12-31' } }))],
    [
      'browse date:desc, offset 0-10,000',
      [0, 100, 1000, 5000, 10000].map((offset) => q('', { sort: 'date:desc', offset, limit: 20 })),
    ],
    [
      'browse facets type, tag',
      [0, 100, 1000].map((offset) => q('', { sort: 'date:desc', offset, limit: 20, facets: ['type', 'tag'] })),
    ],
  ];
  // `kinds`: the kinds to count, by the start of their names, comma-separated (all when absent).
  const wanted = kindsArg?.split(',');
  for (const [name, qs] of kinds.filter(([n]) => !wanted || wanted.some((w) => n.startsWith(w)))) {
    counter.reset();
    for (const x of qs) await index.search(x);
    const warm = counter.get();
    const big = [...warm.sites.entries()].sort((a, b) => b[1].bytes - a[1].bytes)[0];
    process.stdout.write(
      `\n${name}, first pass (fills the caches): ${(warm.buffers / qs.length).toFixed(1)} buffers, ${(warm.bytes / qs.length / 1e3).toFixed(1)} kB a query; ≥ 64 kB ${(warm.large / qs.length).toFixed(2)}, ${(warm.largeBytes / qs.length / 1e3).toFixed(1)} kB; most bytes: ${big ? `${(big[1].bytes / 1e6).toFixed(1)} MB at ${big[0]}` : '-'}\n`,
    );
    // A term's values are kept at its second use when its first did not keep them (RM3's
    // expansion terms, short queries' terms: `PostingsIndex.postings`): taken from the pools then.
    counter.reset();
    for (const x of qs) await index.search(x);
    const second = counter.get();
    process.stdout.write(
      `${name}, second pass (values of terms first used without them): ${(second.buffers / qs.length).toFixed(1)} buffers, ${(second.bytes / qs.length / 1e3).toFixed(1)} kB a query\n`,
    );
    counter.reset();
    for (const x of qs) await index.search(x);
    const c = counter.get();
    process.stdout.write(
      `\n${name}: ${qs.length} queries, per query ${(c.buffers / qs.length).toFixed(1)} buffers, ${(c.bytes / qs.length / 1e3).toFixed(1)} kB; of them ≥ 64 kB ${(c.large / qs.length).toFixed(2)}, ${(c.largeBytes / qs.length / 1e3).toFixed(1)} kB\n`,
    );
    const sites = [...c.sites.entries()].sort((a, b) => b[1].buffers - a[1].buffers).slice(0, topSites);
    for (const [site, s] of sites)
      process.stdout.write(
        `  ${(s.buffers / qs.length).toFixed(1)} / query, ${(s.bytes / qs.length / 1e3).toFixed(1)} kB: ${site}\n`,
      );
  }
  process.stdout.write(`\nat the end: ${liveBuffers()}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
