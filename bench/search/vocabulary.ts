/**
 * The vocabulary's look-up structures side by side with the radix tree they replaced
 * (MiniSearch's `SearchableMap`), over the vocabulary of the grown Vaswani corpus at one size:
 * memory held (the tree: heap and array buffers after a full GC, before and after it is built;
 * ours: the bytes of their typed arrays), time from the start of the build
 * to built, the longest step of the build (what a background build may hold the event loop for;
 * per step the fastest of 5 builds)
 * and the longest gap a 0 ms timer saw while the background build ran, and CPU per cold fuzzy
 * look-up of the 2-word queries' terms (each term at the distance the query plan gives it).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/vocabulary.ts [docs] [rounds]
 */
import SearchableMap from 'minisearch/SearchableMap';
import type { Item } from '../../service/content/item';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { FuzzyIndex } from '../../service/search/vocabulary/fuzzy-index';
import { QUERY_LIMITS } from '../../service/search/query/query-plan';
import { DEFAULT_RANKING } from '../../service/search/ranking';
import { SortedTerms } from '../../service/search/vocabulary/sorted-terms';
import { Vocabulary } from '../../service/search/vocabulary/vocabulary';
import { growCorpus, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** Heap and array buffers in use after a full GC. */
function heapAfterGc(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** CPU microseconds of `fn` (user + system). */
function cpu(fn: () => void): number {
  const c = process.cpuUsage();
  fn();
  const d = process.cpuUsage(c);
  return d.user + d.system;
}

/** Wall milliseconds of each step of a stepwise build, and its result. */
function steps<T>(job: Generator<void, T>): { times: number[]; value: T } {
  const times: number[] = [];
  for (;;) {
    const t = performance.now();
    const r = job.next();
    times.push(performance.now() - t);
    if (r.done) return { times, value: r.value };
  }
}

/**
 * A build's steps timed `runs` times: per step the fastest of the runs (a shared machine only
 * adds time), then the longest such step and their sum.
 */
function stepTimes<T>(runs: number, make: () => Generator<void, T>): { longest: number; total: number; value: T } {
  let best: number[] = [];
  let value: T | undefined;
  for (let i = 0; i < runs; i++) {
    const r = steps(make());
    best = i === 0 ? r.times : best.map((b, j) => Math.min(b, r.times[j]));
    value = r.value;
  }
  return { longest: Math.max(...best), total: best.reduce((x, y) => x + y, 0), value: value as T };
}

async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 200000);
  const rounds = Number(process.argv[3] ?? 5);
  const v = loadVaswani();
  const now = new Date(0).toISOString();
  const items = growCorpus(v.items, size).map((i): Item => ({
    ...i,
    type: 'article',
    tags: [],
    created_at: now,
    updated_at: now,
  }));
  const index = new EmbeddedIndex({ indexSliceMs: 1000 });
  await index.replaceAll(items);
  const { compact } = index as unknown as {
    compact: { terms: string[]; fillVocabulary(sliceMs: number): Promise<void> };
  };
  await compact.fillVocabulary(1000);
  const terms = compact.terms.slice();
  const chars = terms.reduce((s, t) => s + t.length, 0);
  const out = (l: string) => process.stdout.write(`${l}\n`);
  out(`docs ${size}: vocabulary ${terms.length} terms, ${chars} UTF-16 units`);

  // Query terms of the 2-word queries, each with the fuzzy distance the plan gives it.
  const L = QUERY_LIMITS;
  const r = DEFAULT_RANKING;
  const qs = [...new Set(twoWordQueries(v.queries.map((q) => q.text)).flatMap((q) => index.queryTerms(q)))]
    .map(
      (t) =>
        [
          t,
          t.length >= r.fuzzyMinLength && t.length <= L.maxFuzzyLength
            ? Math.min(L.maxFuzzyDistance, Math.round(t.length * 0.2))
            : 0,
        ] as const,
    )
    .filter(([, k]) => k > 0);

  const h0 = heapAfterGc();
  let t = performance.now();
  const tree = new SearchableMap<number>();
  terms.forEach((term, i) => tree.set(term, i));
  const treeBuild = performance.now() - t;
  const treeHeap = heapAfterGc() - h0;
  out(
    `radix tree: heap and buffers ${(treeHeap / 2 ** 20).toFixed(1)} MB, built in one step ${treeBuild.toFixed(1)} ms`,
  );

  const sorted = stepTimes(5, () => SortedTerms.build(terms, terms.length));
  const fuzzy = stepTimes(5, () => FuzzyIndex.build(terms, terms.length));
  out(
    `steps (fastest of 5 builds each): sorted terms ${sorted.total.toFixed(1)} ms in all, longest ${sorted.longest.toFixed(2)} ms; trigram index ${fuzzy.total.toFixed(1)} ms, longest ${fuzzy.longest.toFixed(2)} ms; ` +
      `their arrays ${((sorted.value.bytes + fuzzy.value.bytes) / 2 ** 20).toFixed(2)} MB`,
  );

  // The background build as the service runs it (5 ms slices), with a 0 ms timer beside it.
  const vocab = new Vocabulary(terms);
  let gap = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const n = performance.now();
    gap = Math.max(gap, n - last);
    last = n;
    if (running) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  t = performance.now();
  await vocab.fill(5);
  const fillMs = performance.now() - t;
  running = false;
  out(
    `background build (5 ms slices): ready to built ${fillMs.toFixed(1)} ms, longest gap a 0 ms timer saw ${gap.toFixed(1)} ms`,
  );

  // Same answers, then CPU per cold fuzzy look-up, interleaved by round.
  for (const [q, k] of qs) {
    const a = [...tree.fuzzyGet(q, k)].map(([term, [id, d]]) => `${term}:${id}:${d}`).sort();
    const b: string[] = [];
    vocab.near(q, k, (id, d) => b.push(`${terms[id]}:${id}:${d}`));
    if (a.join() !== b.sort().join()) throw new Error(`different near spellings of ${q}`);
  }
  let sink = 0;
  const treeUs: number[] = [];
  const oursUs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    treeUs.push(cpu(() => qs.forEach(([q, k]) => (sink += tree.fuzzyGet(q, k).size))));
    oursUs.push(cpu(() => qs.forEach(([q, k]) => vocab.near(q, k, () => sink++))));
  }
  const med = (xs: number[], n: number) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] / n;
  out(
    `cold fuzzy look-up, CPU per term (${qs.length} terms of 5+ letters, median of ${rounds} rounds): tree ${med(treeUs, qs.length).toFixed(1)} µs, ours ${med(oursUs, qs.length).toFixed(1)} µs (${(med(oursUs, qs.length) / med(treeUs, qs.length)).toFixed(2)}×)`,
  );

  // Prefix look-ups (the 2,000 first of the tree, as the plan scans them), same comparison.
  const ps = [...new Set(twoWordQueries(v.queries.map((q) => q.text)).flatMap((q) => index.queryTerms(q)))].filter(
    (p) => p.length >= r.prefixMinLength,
  );
  const count = (p: string, most: number) => {
    const keys = tree.atPrefix(p).keys();
    let n = 0;
    while (n < most && !keys.next().done) n++;
    return n;
  };
  const treePrefix = (p: string) => (sink += count(p, L.maxPrefixScan));
  const big = ps.filter((p) => count(p, Infinity) > L.maxPrefixScan).length;
  treeUs.length = 0;
  oursUs.length = 0;
  for (let round = 0; round < rounds; round++) {
    treeUs.push(cpu(() => ps.forEach(treePrefix)));
    oursUs.push(cpu(() => ps.forEach((p) => vocab.prefixed(p, L.maxPrefixScan, () => (sink++, true)))));
  }
  out(
    `prefix look-up, CPU per term (${ps.length} terms, ${big} with more than ${L.maxPrefixScan}): tree ${med(treeUs, ps.length).toFixed(1)} µs, ours ${med(oursUs, ps.length).toFixed(1)} µs [${sink > 0 ? 'ok' : ''}]`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
