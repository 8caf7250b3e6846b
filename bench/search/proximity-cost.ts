/**
 * Issue 28's sixth slice: what proximity costs at a size, in one process over the bench's grown
 * Vaswani corpus (`growCorpus`), this checkout's index or another checkout's (`--base <dir>`,
 * memory only): memory (heapUsed and arrayBuffers per document, forced GC, before the build to
 * after it; the positions' own bytes), the window document frequencies of the bench's queries'
 * pairs found cold (every pair of the 93 full queries, each once: total, largest, documents
 * intersected), and per full query (limit 10, interleaved, median of `reps`) the time with
 * proximity off, off but asking the final pass for the top 100 (what a depth of 100 would read), and on
 * (window frequencies warm).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/proximity-cost.ts 200000 [reps] [--base <dir>] [--memory-only]
 */
import type { ProximitySource } from '../../service/search/index/cursor';
import { join, resolve } from 'node:path';
import type { Item } from '../../service/content/item';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { queryPairs } from '../../service/search/scoring/proximity';
import { atOnce } from '../../service/lib/yield-to-loop';
import { WindowDfCache } from '../../service/search/index/window-df';
import { growCorpus } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

interface Inside {
  ranking: EmbeddedIndex['ranking'];
  compact: {
    proximitySource(): ProximitySource | undefined;
    windowDfs: WindowDfCache;
    posBytes?: Uint8Array;
    posStart?: Int32Array;
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const size = Number(args[0] ?? 200_000);
  const reps = Number(args[1] && !args[1].startsWith('--') ? args[1] : 3);
  const baseAt = args.indexOf('--base');
  const v = loadVaswani();
  const now = new Date(0).toISOString();
  const items = growCorpus(v.items, size).map((i): Item => ({
    ...i,
    type: 'article',
    tags: [],
    created_at: now,
    updated_at: now,
  }));
  /* eslint-disable @typescript-eslint/no-require-imports */
  const Index =
    baseAt >= 0
      ? (
          require(join(resolve(args[baseAt + 1]), 'service/search/embedded-index')) as {
            EmbeddedIndex: typeof EmbeddedIndex;
          }
        ).EmbeddedIndex
      : EmbeddedIndex;
  /* eslint-enable @typescript-eslint/no-require-imports */
  gc();
  const m0 = process.memoryUsage();
  const index = new Index({ indexSliceMs: 1000 });
  await index.replaceAll(items);
  await index.settled();
  gc();
  const m1 = process.memoryUsage();
  const inside = index as unknown as Inside;
  const pos = inside.compact.posBytes ? inside.compact.posBytes.length + (inside.compact.posStart?.byteLength ?? 0) : 0;
  const per = (x: number) => `${(x / size / 1024).toFixed(3)} KB`;
  console.log(
    `${size} documents (${baseAt >= 0 ? args[baseAt + 1] : 'this checkout'}): heapUsed ${per(m1.heapUsed - m0.heapUsed)}/doc, arrayBuffers ${per(m1.arrayBuffers - m0.arrayBuffers)}/doc, external ${per(m1.external - m0.external)}/doc, rss ${Math.round(m1.rss / 2 ** 20)} MB; positions ${per(pos)}/doc (${Math.round(pos / 2 ** 20)} MB)`,
  );
  if (baseAt >= 0 || args.includes('--memory-only')) return;
  const source = inside.compact.proximitySource()!;
  const { window } = index.ranking.proximity;
  // Cold window document frequencies of every pair of the full queries.
  inside.compact.windowDfs = new WindowDfCache();
  const costs: number[] = [];
  let pairs = 0;
  const cpu0 = process.cpuUsage();
  for (const q of v.queries) {
    const terms = index.queryTerms(q.text);
    let ms = 0;
    for (const [a, b] of queryPairs(terms)) {
      const ta = source.termId(a);
      const tb = source.termId(b);
      if (ta === undefined || tb === undefined) continue;
      const t = performance.now();
      atOnce(source.windowDf(ta, tb, window));
      ms += performance.now() - t;
      pairs += 1;
    }
    costs.push(ms);
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `window df, cold, ${pairs} pairs of ${v.queries.length} queries: total ${Math.round(costs.reduce((x, y) => x + y, 0))} ms (CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms), per query p50 ${median(costs).toFixed(2)} ms, p99 ${p99(costs).toFixed(2)} ms, largest ${Math.max(...costs).toFixed(1)} ms`,
  );
  const on = index.ranking;
  const off = { ...on, proximity: { ...on.proximity, weight: 0 } };
  const runs: Array<[string, number, typeof on]> = [
    ['off, limit 10', 10, off],
    ['off, limit 100', 100, off],
    ['on, limit 10', 10, on],
  ];
  const times = runs.map(() => v.queries.map((): number[] => []));
  for (let r = 0; r <= reps; r++) {
    for (const [i, q] of v.queries.entries()) {
      for (const [j, [, limit, ranking]] of runs.entries()) {
        inside.ranking = ranking;
        const t = performance.now();
        await index.search({ text: q.text, limit, offset: 0, snippets: false });
        if (r > 0) times[j][i].push(performance.now() - t);
      }
    }
  }
  inside.ranking = on;
  for (const [j, [name]] of runs.entries()) {
    const m = times[j].map(median);
    console.log(`full queries, ${name}: p50 ${median(m).toFixed(2)} ms, p99 ${p99(m).toFixed(2)} ms`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
