/**
 * Filters, facets and browsing without words (issue 40), in process: the grown Vaswani corpus of
 * the 1M search bench (`growCorpus`, as ab.ts builds it) with types, tags, dates and update times
 * drawn per item from a seeded generator (60 % articles, 30 % projects, 10 % experiences; 0–3
 * tags of 40 with a Zipf-like skew; days over ten years), one `EmbeddedIndex`, and per size:
 *
 * - filtered ÷ unfiltered: Vaswani's 93 queries (full: RM3) and their 2-word forms, each asked
 *   unfiltered and under three filters (types article+project, one tag, a year), interleaved, the
 *   median of `reps` repetitions per query; p50 of those medians and of the per-query ratios;
 * - facets (`type`, `tag`) on the queries that match ≥ 100,000 documents: p50 with and without;
 * - browsing without words by date (`date:desc`), at offsets 0 … 10,000, unfiltered and by type;
 * - the longest event-loop delay seen over each part (`monitorEventLoopDelay`, 1 ms resolution).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/filters.ts [sizes, e.g. 200000,1000000] [reps] [parts: filtered,facets,browse]
 *
 * `run()` (part of `make bench`, 200,000 documents) returns the Markdown and writes bench/results/filters.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Item, ItemType } from '../../service/content/item';
import type { ItemFilter } from '../../service/content/item-filter';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import type { IndexQuery } from '../../service/search/search-index';
import { growCorpus, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];

/** A seeded generator in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TAGS = Array.from({ length: 40 }, (_, i) => `tag-${i}`);
const START = Date.UTC(2016, 0, 1);
const DAY_MS = 86_400_000;

/** The corpus of `size` documents with their attributes. */
export function attributedCorpus(v: Vaswani, size: number): Item[] {
  const r = random(40);
  return growCorpus(v.items, size).map((i): Item => {
    const x = r();
    const type: ItemType = x < 0.6 ? 'article' : x < 0.9 ? 'project' : 'experience';
    const tags = new Set<string>();
    const n = Math.floor(r() * 4);
    // Zipf-like: tag k drawn with weight ~ 1/(k+1).
    for (let k = 0; k < n; k++) tags.add(TAGS[Math.min(TAGS.length - 1, Math.floor(Math.exp(r() * Math.log(41))) - 1)]);
    const day = new Date(START + Math.floor(r() * 3650) * DAY_MS).toISOString();
    const updated = new Date(START + Math.floor(r() * 3650 * DAY_MS)).toISOString();
    return { ...i, type, tags: [...tags], date: day.slice(0, 10), created_at: day, updated_at: updated };
  });
}

/** Times `fn` (ms). */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** The longest event-loop delay over `fn`, ms. */
async function stallOf<T>(fn: () => Promise<T>): Promise<{ value: T; maxDelayMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const value = await fn();
  h.disable();
  return { value, maxDelayMs: h.max / 1e6 };
}

const FILTERS: Array<[string, ItemFilter]> = [
  ['type article+project (90 %)', { type: ['article', 'project'] }],
  ['tag tag-3 (~15 %)', { tag: ['tag-3'] }],
  ['a year (~10 %)', { date_from: '2020-01-01', date_to: '2020-12-31' }],
];

/** The parts of a run. */
export type FilterBenchPart = 'filtered' | 'facets' | 'browse';
const ALL_PARTS: readonly FilterBenchPart[] = ['filtered', 'facets', 'browse'];

/** One size's report lines. */
export async function filtersAt(
  v: Vaswani,
  size: number,
  reps: number,
  log: (l: string) => void,
  parts: readonly FilterBenchPart[] = ALL_PARTS,
): Promise<string[]> {
  const items = attributedCorpus(v, size);
  const index = new EmbeddedIndex({ indexSliceMs: 1000 });
  let t = performance.now();
  await index.replaceAll(items);
  await index.settled();
  // The vocabulary's look-up structures before the first query (ab.ts does the same).
  await (index as unknown as { compact: { fillVocabulary(ms: number): Promise<void> } }).compact.fillVocabulary(1000);
  log(`${size}: indexed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const out: string[] = [`#### ${size.toLocaleString('en')} documents`, ''];
  const texts = v.queries.map((q) => q.text);
  const q = (text: string, extra: Partial<IndexQuery> = {}): IndexQuery => ({
    text,
    limit: 10,
    offset: 0,
    snippets: false,
    ...extra,
  });
  // The first filtered query builds the document columns (once per merge): timed apart.
  t = performance.now();
  await index.search(q('', { filter: { type: ['project'] } }));
  out.push(`- document columns and day order built by the first browse: ${(performance.now() - t).toFixed(0)} ms`, '');
  out.push(
    '| queries | filter | unfiltered p50 / p99 | filtered p50 / p99 | p50 ratio | per-query ratio p50 / p90 | max loop delay |',
  );
  out.push('|---|---|---|---|---|---|---|');
  for (const [kind, qs] of parts.includes('filtered')
    ? ([
        ['full', texts],
        ['2-word', twoWordQueries(texts)],
      ] as const)
    : []) {
    for (const [name, filter] of FILTERS) {
      const { value, maxDelayMs } = await stallOf(async () => {
        const plain: number[][] = qs.map(() => []);
        const filtered: number[][] = qs.map(() => []);
        for (let r = 0; r <= reps; r++) {
          for (const [i, text] of qs.entries()) {
            const a = await timed(() => index.search(q(text)));
            const b = await timed(() => index.search(q(text, { filter })));
            if (r === 0) continue;
            plain[i].push(a);
            filtered[i].push(b);
          }
        }
        return { plain: plain.map(median), filtered: filtered.map(median) };
      });
      const ratios = value.plain.map((p, i) => value.filtered[i] / p);
      const sorted = [...ratios].sort((a, b) => a - b);
      const line = `| ${kind} | ${name} | ${median(value.plain).toFixed(2)} / ${p99(value.plain).toFixed(2)} ms | ${median(value.filtered).toFixed(2)} / ${p99(value.filtered).toFixed(2)} ms | ${(median(value.filtered) / median(value.plain)).toFixed(2)}× | ${median(ratios).toFixed(2)}× / ${sorted[Math.floor(sorted.length * 0.9)].toFixed(2)}× | ${maxDelayMs.toFixed(1)} ms |`;
      out.push(line);
      log(line);
    }
  }
  // Facets on the queries matching 100,000 documents or more.
  const big: string[] = [];
  if (parts.includes('facets'))
    for (const text of texts) if ((await index.search(q(text))).total >= 100_000) big.push(text);
  out.push('');
  if (big.length) {
    const { value, maxDelayMs } = await stallOf(async () => {
      const plain: number[] = [];
      const faceted: number[] = [];
      for (let r = 0; r <= reps; r++) {
        for (const text of big) {
          const a = await timed(() => index.search(q(text)));
          const b = await timed(() => index.search(q(text, { facets: ['type', 'tag'] })));
          if (r === 0) continue;
          plain.push(a);
          faceted.push(b);
        }
      }
      return { plain, faceted };
    });
    const line = `- facets (type, tag) on the ${big.length} full queries matching ≥ 100,000: p50 ${median(value.faceted).toFixed(2)} ms (p99 ${p99(value.faceted).toFixed(2)}), the same queries without facets ${median(value.plain).toFixed(2)} ms; max loop delay ${maxDelayMs.toFixed(1)} ms`;
    out.push(line);
    log(line);
  } else if (parts.includes('facets')) out.push('- no full query matches 100,000 documents at this size');
  // Browsing without words, newest first.
  for (const [name, filter] of (parts.includes('browse')
    ? [
        ['all', undefined],
        ['type project', { type: ['project'] }],
      ]
    : []) as Array<[string, ItemFilter | undefined]>) {
    const cells: string[] = [];
    let worst = 0;
    for (const offset of [0, 100, 1_000, 5_000, 10_000]) {
      const { value, maxDelayMs } = await stallOf(async () => {
        const ts: number[] = [];
        for (let r = 0; r <= Math.max(reps, 10); r++) {
          const d = await timed(() => index.search(q('', { filter, sort: 'date:desc', offset, limit: 20 })));
          if (r > 0) ts.push(d);
        }
        return ts;
      });
      worst = Math.max(worst, maxDelayMs);
      cells.push(`${offset}: ${median(value).toFixed(2)}`);
    }
    const line = `- browse by date:desc, ${name}, p50 ms at offset ${cells.join(', ')}; max loop delay ${worst.toFixed(1)} ms`;
    out.push(line);
    log(line);
  }
  return out;
}

/** `make bench`'s part: 200,000 documents, 3 repetitions; writes bench/results/filters.md. */
export async function run(
  sizes: readonly number[] = [200_000],
  reps = 3,
  parts: readonly FilterBenchPart[] = ALL_PARTS,
): Promise<string> {
  const v = loadVaswani();
  const lines = ['### Filters, facets and browsing (issue 40), in process', ''];
  for (const size of sizes)
    lines.push(...(await filtersAt(v, size, reps, (l) => process.stderr.write(`${l}\n`), parts)), '');
  const md = lines.join('\n');
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'filters.md'), `${md}\n`);
  return md;
}

if (require.main === module) {
  const [sizesArg, repsArg, partsArg] = process.argv.slice(2);
  const parts = (partsArg ? partsArg.split(',') : ALL_PARTS) as FilterBenchPart[];
  run((sizesArg ?? '200000').split(',').map(Number), Number(repsArg ?? 3), parts).then(
    (md) => process.stdout.write(`${md}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
