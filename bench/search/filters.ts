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
 * - the longest event-loop delay seen over each part and the longest turn of the loop in CPU time
 *   of its thread (`monitorEventLoop`, 1 ms resolution: on a loaded machine the delay includes the
 *   time the OS did not run the process, the CPU time does not).
 *
 * Times are given in wall-clock and in CPU time of the process (`process.cpuUsage`): with other
 * work on the machine only the latter says what a query costs. With
 * `FILTERS_BENCH_BASE=<another checkout>` the same corpus is indexed by that tree's
 * `EmbeddedIndex` too and every measurement is made on both, interleaved query by query (A/B
 * under the same load), the index asked first alternating from one query (and repetition) to the
 * next. That A/B is biased: with both trees the same code (main), the tree the bench runs from
 * answered in 0.80-0.82x the CPU of the other, whichever index was built or asked first; with
 * `FILTERS_BENCH_BASE` this very tree (one copy of the modules) 1.00-1.09x (BENCHMARKS.md,
 * facet-fast). Run an A/B both ways, each tree once as the one the bench runs from, and read
 * this / base as the square root of (this / base run from this tree) / (base / this run from the
 * base's).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/filters.ts [sizes, e.g. 200000,1000000] [reps] [parts: filtered,facets,browse] [--attribute[=ms] [--units]] [--turns[=ms] [--turn-detail]] [--steps[=ms]] [--windows[=ms]]
 *
 * `--attribute` (as stall.ts and delete.ts): per measured row, of the stalls over that many ms (30),
 * the 10 with the most loop-thread CPU and what filled them (GC pauses by kind, the slices that
 * ended in them), on stderr; with `--units` also the longest units of work between two yields.
 *
 * `--turns[=ms]`: every turn of the loop thread over that many ms of CPU (30) over the whole run,
 * with what the bench was doing when it began and ended (`turn-log.ts`), on stderr: a long turn
 * that falls between the rows' measurements is still named. With `--turn-detail` each also gets the
 * kernel's counts for the loop's thread over it (user and system ticks, faults, switches, time
 * waiting for a core, its CPU) and its start in epoch ms, to match a probe run beside it
 * (`lost-ticks.ts`: stretches in which the host did not run a vCPU).
 *
 * `--steps[=ms]`: every step of a query's jobs over that many ms (10) of the loop thread's CPU
 * (`index/step-trace.ts`: the first pass's `cursorJob`, the browse's and the columns' jobs, each
 * named), on stdout, each line led by the index's label: what a long turn of `--turns` was made of.
 *
 * `--windows[=ms]`: every window of `windowedTopK` over that many ms (20) of the loop thread's CPU
 * (`index/step-trace.ts`: scorer, postings, ns a posting, faults, start time), on stdout, and the
 * number of windows run at the end; with V8's `--log-code --log-deopt --logfile=…` its times
 * (microseconds since the isolate started) are the windows' `at` less the `[window-mark]` line's offset.
 *
 * `run()` (part of `make bench`, 200,000 documents) returns the Markdown and writes bench/results/filters.md.
 */
import { existsSync, mkdirSync, writeFileSync, writeSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import type { Item, ItemType } from '../../service/content/item';
import type { ItemFilter } from '../../service/content/item-filter';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { monitorEventLoop } from '../../service/metrics/event-loop-delay';
import type { IndexQuery } from '../../service/search/search-index';
import { growCorpus, mulberry32, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { traceSteps } from '../../service/search/index/step-trace';
import { collectGarbage } from '../collect-garbage';
import { traceWindows, windowsTraced } from '../../service/search/scoring/window-trace';
import { heldItem } from './held-items';
import { attribute } from './stall-attribution';
import { turnLog } from './turn-log';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];

const TAGS = Array.from({ length: 40 }, (_, i) => `tag-${i}`);
const START = Date.UTC(2016, 0, 1);
const DAY_MS = 86_400_000;

/** The corpus of `size` documents with their attributes, held as the service holds items (`heldItem`: packed). */
export function attributedCorpus(v: Vaswani, size: number): Item[] {
  const r = mulberry32(40);
  return growCorpus(v.items, size).map((i): Item => {
    const x = r();
    const type: ItemType = x < 0.6 ? 'article' : x < 0.9 ? 'project' : 'experience';
    const tags = new Set<string>();
    const n = Math.floor(r() * 4);
    // Zipf-like: tag k drawn with weight ~ 1/(k+1).
    for (let k = 0; k < n; k++) tags.add(TAGS[Math.min(TAGS.length - 1, Math.floor(Math.exp(r() * Math.log(41))) - 1)]);
    const day = new Date(START + Math.floor(r() * 3650) * DAY_MS).toISOString();
    const updated = new Date(START + Math.floor(r() * 3650 * DAY_MS)).toISOString();
    return heldItem({ ...i, type, tags: [...tags], date: day.slice(0, 10), created_at: day, updated_at: updated });
  });
}

/**
 * CPU seconds of the process (`getrusage`: every thread, the GC's helpers too, so it errs long;
 * the loop thread's own, `loopThreadCpu`, reads schedstat, which Linux brings up to date only at
 * ticks and switches: too coarse for a query of a millisecond).
 */
const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** A measurement: wall-clock and CPU time of the process, ms. */
interface Took {
  readonly wall: number;
  readonly cpu: number;
}

/** Times `fn`. */
async function timed(fn: () => Promise<unknown>): Promise<Took> {
  const t = performance.now();
  const c = cpuSeconds();
  await fn();
  return { wall: performance.now() - t, cpu: (cpuSeconds() - c) * 1000 };
}

/**
 * The longest event-loop delay over `fn`, the longest turn of the loop in CPU time and the
 * longest garbage collection (whose pause is part of a turn), ms.
 */
async function stallOf<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; maxDelayMs: number; busyMs: number; gcMs: number }> {
  turns?.doing('a row monitor starting');
  const ms = attributing();
  const recording = ms === undefined ? undefined : attribute(ms, process.argv.includes('--units'));
  const m = monitorEventLoop(1);
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs = Math.max(gcMs, e.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  m.take();
  const value = await fn();
  turns?.doing('a row monitor ending');
  const { max, busyMax } = m.take();
  m.stop();
  gc.disconnect();
  if (recording) {
    // The stalls the loop's own thread made longest (on a busy machine wall time is mostly waiting for a core).
    const stalls = recording.stop();
    process.stderr.write(`  attributed: ${stalls.length} stalls over ${ms} ms\n`);
    for (const s of [...stalls].sort((a, b) => b.loopCpu - a.loopCpu).slice(0, 10))
      process.stderr.write(`  ${JSON.stringify(s)}\n`);
    for (const u of recording.longUnits().slice(0, 10))
      process.stderr.write(`  unit ${u.n}× max ${u.max} ms (${u.maxNoGc} without GC): ${u.where}\n`);
  }
  turns?.doing('between rows');
  return { value, maxDelayMs: max * 1000, busyMs: busyMax * 1000, gcMs };
}

/** `--turns[=ms]`: the run's turns over that many ms (30) of the loop thread's CPU, named (`turnLog`). */
const turns = ((): ReturnType<typeof turnLog> | undefined => {
  const a = process.argv.find((x) => x.startsWith('--turns'));
  return a === undefined ? undefined : turnLog(Number(a.split('=')[1] ?? 30), process.argv.includes('--turn-detail'));
})();

/** `--attribute[=ms]`: attribute the stalls over that many ms (30). */
function attributing(): number | undefined {
  const a = process.argv.find((x) => x.startsWith('--attribute'));
  if (!a) return undefined;
  return Number(a.split('=')[1] ?? 30);
}

/** What the bench asks of an index (this tree's `EmbeddedIndex`, or another checkout's). */
interface BenchIndex {
  search(q: IndexQuery): Promise<{ total: number }>;
  replaceAll(items: readonly Item[]): Promise<void>;
  settled(): Promise<void>;
}

/** This tree's index and, with `FILTERS_BENCH_BASE`, that checkout's: label and a new index. */
function indexMakers(): Array<[string, () => BenchIndex]> {
  const out: Array<[string, () => BenchIndex]> = [['this', () => new EmbeddedIndex({ indexSliceMs: 1000 })]];
  const base = process.env.FILTERS_BENCH_BASE;
  if (base) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(join(base, 'service/search/embedded-index')) as { EmbeddedIndex: typeof EmbeddedIndex };
    out.push(['base', () => new mod.EmbeddedIndex({ indexSliceMs: 1000 })]);
  }
  // `FILTERS_BENCH_BASE_FIRST=1`: the base's index is built (and its heavy queries chosen) first.
  return process.env.FILTERS_BENCH_BASE_FIRST === '1' ? out.reverse() : out;
}

/** A query of the benches over the attributed corpus: one page of 10, no snippets. */
export const q = (text: string, extra: Partial<IndexQuery> = {}): IndexQuery => ({
  text,
  limit: 10,
  offset: 0,
  snippets: false,
  ...extra,
});

const FILTERS: Array<[string, ItemFilter]> = [
  ['type article+project (90 %)', { type: ['article', 'project'] }],
  ['tag tag-3 (~15 %)', { tag: ['tag-3'] }],
  ['a year (~10 %)', { date_from: '2020-01-01', date_to: '2020-12-31' }],
];

/** The parts of a run. */
export type FilterBenchPart = 'filtered' | 'facets' | 'browse';
const ALL_PARTS: readonly FilterBenchPart[] = ['filtered', 'facets', 'browse'];

/** `xs`' p50 / p99 in ms, two decimals. */
const pp = (xs: readonly number[]): string => `${median(xs).toFixed(2)} / ${p99(xs).toFixed(2)}`;

/** One size's report lines. */
export async function filtersAt(
  v: Vaswani,
  size: number,
  reps: number,
  log: (l: string) => void,
  parts: readonly FilterBenchPart[] = ALL_PARTS,
): Promise<string[]> {
  turns?.doing(`${size}: corpus`);
  const items = attributedCorpus(v, size);
  const out: string[] = [`#### ${size.toLocaleString('en')} documents`, ''];
  const indexes: Array<[string, BenchIndex]> = [];
  for (const [label, make] of indexMakers()) {
    const index = make();
    turns?.doing(`${size} ${label}: indexing`);
    const t = performance.now();
    await index.replaceAll(items);
    await index.settled();
    // The vocabulary's look-up structures before the first query (ab.ts does the same).
    await (index as unknown as { compact: { fillVocabulary(ms: number): Promise<void> } }).compact.fillVocabulary(1000);
    // A full collection after the build, as the service runs one before readiness (`startDeps`'
    // `settle`): the build's garbage is the build's, not the first queries' (issue 40).
    collectGarbage();
    log(`${size} ${label}: indexed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    // The first browse, timed apart: it built the document columns and the day order (once per
    // merge) until the index prepared them when it indexes (`EmbeddedIndex.prepareBrowse`, in
    // the indexing time above); now it compiles its filter.
    turns?.doing(`${size} ${label}: first browse`);
    const first = await stallOf(() => timed(() => index.search(q('', { filter: { type: ['project'] } }))));
    out.push(
      `- ${label}: the first browse (type project; the columns and orders built by it, or prepared when indexed): ${first.value.wall.toFixed(0)} ms (CPU ${first.value.cpu.toFixed(0)} ms), longest turn ${first.busyMs.toFixed(1)} ms CPU, longest GC ${first.gcMs.toFixed(1)} ms, max loop delay ${first.maxDelayMs.toFixed(1)} ms`,
    );
    indexes.push([label, index]);
  }
  out.push('');
  const texts = v.queries.map((x) => x.text);
  // Per index: measurements of `ask` per query (the median of `reps`, interleaved query by query and index by index).
  const measure = async (
    row: string,
    qs: readonly string[],
    asks: ReadonlyArray<(text: string) => IndexQuery>,
  ): Promise<{
    value: Array<Array<{ wall: number[]; cpu: number[] }>>;
    maxDelayMs: number;
    busyMs: number;
    gcMs: number;
  }> =>
    stallOf(async () => {
      const runs = indexes.map(() => asks.map(() => qs.map(() => [] as Took[])));
      for (let r = 0; r <= reps; r++)
        for (const [i, text] of qs.entries())
          // The index asked first in a pair ran ~20 % faster (filter-perf, query-stall): each
          // query and repetition starts at the next index in turn, so every index is asked first
          // as often as the others (r + i: a query's repetitions alternate too).
          for (let n = 0; n < indexes.length; n++) {
            const x = (r + i + n) % indexes.length;
            const index = indexes[x][1];
            for (const [a, ask] of asks.entries()) {
              turns?.doing(`${row}: rep ${r}, query ${i}, index ${x}, ask ${a}`);
              const took = await timed(() => index.search(ask(text)));
              turns?.doing(`${row}: after rep ${r}, query ${i}, index ${x}, ask ${a}`);
              if (r > 0) runs[x][a][i].push(took);
            }
          }
      return runs.map((byAsk) =>
        byAsk.map((byQuery) => ({
          wall: byQuery.map((ts) => median(ts.map((t) => t.wall))),
          cpu: byQuery.map((ts) => median(ts.map((t) => t.cpu))),
        })),
      );
    });
  if (parts.includes('filtered')) {
    out.push(
      '| index | queries | filter | unfiltered p50 / p99 (CPU) | filtered p50 / p99 (CPU) | p50 ratio CPU (wall) | per-query CPU ratio p50 / p90 | longest turn CPU / longest GC / max loop delay |',
    );
    out.push('|---|---|---|---|---|---|---|---|');
    for (const [kind, qs] of [
      ['full', texts],
      ['2-word', twoWordQueries(texts)],
    ] as const)
      for (const [name, filter] of FILTERS) {
        const m = await measure(`${kind} ${name}`, qs, [(text) => q(text), (text) => q(text, { filter })]);
        for (const [x, [label]] of indexes.entries()) {
          const [plain, filtered] = m.value[x];
          const ratios = plain.cpu.map((p, i) => filtered.cpu[i] / p).sort((a, b) => a - b);
          const line = `| ${label} | ${kind} | ${name} | ${pp(plain.cpu)} ms | ${pp(filtered.cpu)} ms | ${(median(filtered.cpu) / median(plain.cpu)).toFixed(2)}× (${(median(filtered.wall) / median(plain.wall)).toFixed(2)}×) | ${median(ratios).toFixed(2)}× / ${ratios[Math.floor(ratios.length * 0.9)].toFixed(2)}× | ${m.busyMs.toFixed(1)} / ${m.gcMs.toFixed(1)} / ${m.maxDelayMs.toFixed(1)} ms |`;
          out.push(line);
          log(line);
        }
      }
    out.push('');
  }
  // Facets on the queries (full, and their 2-word forms) matching 100,000 documents or more.
  for (const [kind, qs] of (parts.includes('facets')
    ? [
        ['full', texts],
        ['2-word', twoWordQueries(texts)],
      ]
    : []) as Array<[string, readonly string[]]>) {
    const big: string[] = [];
    turns?.doing(`facets ${kind}: choosing the queries matching 100,000`);
    for (const text of qs) if ((await indexes[0][1].search(q(text))).total >= 100_000) big.push(text);
    if (!big.length) {
      out.push(`- no ${kind} query matches 100,000 documents at this size`);
      continue;
    }
    const m = await measure(`facets ${kind}`, big, [(text) => q(text), (text) => q(text, { facets: ['type', 'tag'] })]);
    for (const [x, [label]] of indexes.entries()) {
      const [plain, faceted] = m.value[x];
      const line = `- ${label}: facets (type, tag) on the ${big.length} ${kind} queries matching ≥ 100,000: p50 / p99 ${pp(faceted.cpu)} ms CPU (wall p50 ${median(faceted.wall).toFixed(2)}), the same queries without facets ${pp(plain.cpu)} ms CPU (wall p50 ${median(plain.wall).toFixed(2)}); per query the facets add p50 ${median(faceted.cpu.map((f, i) => f - plain.cpu[i])).toFixed(2)} ms CPU; longest turn ${m.busyMs.toFixed(1)} ms CPU, longest GC ${m.gcMs.toFixed(1)} ms, max loop delay ${m.maxDelayMs.toFixed(1)} ms`;
      out.push(line);
      log(line);
    }
  }
  // Browsing without words, newest first (with facets too), and by update time.
  for (const [name, filter, extra] of (parts.includes('browse')
    ? [
        ['all', undefined, {}],
        ['type project', { type: ['project'] }, {}],
        ['all, facets type and tag', undefined, { facets: ['type', 'tag'] }],
        ['all, sorted by updated:desc', undefined, { sort: 'updated:desc' }],
      ]
    : []) as Array<[string, ItemFilter | undefined, Partial<IndexQuery>]>) {
    const cells: string[][] = indexes.map(() => []);
    let worst = 0;
    let busy = 0;
    for (const offset of [0, 100, 1_000, 5_000, 10_000]) {
      const m = await measure(
        `browse ${name}, offset ${offset}`,
        Array.from({ length: Math.max(reps, 10) }, () => ''),
        [() => q('', { filter, sort: 'date:desc', offset, limit: 20, ...extra })],
      );
      worst = Math.max(worst, m.maxDelayMs);
      busy = Math.max(busy, m.busyMs);
      for (const x of indexes.keys())
        cells[x].push(`${offset}: ${median(m.value[x][0].cpu).toFixed(2)} (${median(m.value[x][0].wall).toFixed(2)})`);
    }
    for (const [x, [label]] of indexes.entries()) {
      const line = `- ${label}: browse (date:desc unless said), ${name}, p50 ms CPU (wall) at offset ${cells[x].join(', ')}; longest turn ${busy.toFixed(1)} ms CPU, max loop delay ${worst.toFixed(1)} ms`;
      out.push(line);
      log(line);
    }
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

/** Called once when the window log starts (`--windows`): a mark in V8's log. */
function windowLogMark(): number {
  return performance.now();
}

if (require.main === module) {
  const steps = process.argv.find((x) => x.startsWith('--steps'));
  if (steps) {
    const ms = Number(steps.split('=')[1] ?? 10);
    traceSteps({ ms, log: (line) => writeSync(1, `this ${line}\n`) });
    // The base's modules are its own: its step log is turned on apart (a tree without one is left alone).
    const base = process.env.FILTERS_BENCH_BASE;
    if (base && existsSync(join(base, 'service/search/index/step-trace.ts'))) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const t = require(join(base, 'service/search/index/step-trace')) as { traceSteps: typeof traceSteps };
      t.traceSteps({ ms, log: (line) => writeSync(1, `base ${line}\n`) });
    }
  }
  const windowsArg = process.argv.find((x) => x.startsWith('--windows'));
  if (windowsArg) {
    traceWindows({ ms: Number(windowsArg.split('=')[1] ?? 20), log: (line) => writeSync(1, `this ${line}\n`) });
    // A function first called now: its `code-creation` time in V8's log, set beside this line's, gives the offset.
    const at = performance.now();
    windowLogMark();
    writeSync(
      1,
      `[window-mark] windowLogMark called at ${at.toFixed(2)} ms (performance.now()); timeOrigin ${performance.timeOrigin.toFixed(1)}\n`,
    );
    process.on('exit', () =>
      writeSync(1, `[windows] ${windowsTraced.n} windows, ${windowsTraced.postings} postings traced\n`),
    );
  }
  const [sizesArg, repsArg, partsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const parts = (partsArg ? partsArg.split(',') : ALL_PARTS) as FilterBenchPart[];
  run((sizesArg ?? '200000').split(',').map(Number), Number(repsArg ?? 3), parts).then(
    (md) => process.stdout.write(`${md}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
