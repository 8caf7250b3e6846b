/**
 * The order effect of `filters.ts` (issue 40): the faceted full RM3 query (Vaswani's 93 full
 * queries, those matching ≥ 100,000 at 1M) measured in one process fresh, after the filtered
 * part's queries (each full query unfiltered and under the bench's three filters, twice), and
 * after each of several resets, as steps given in order (a comma list):
 *
 * - `facets`: every query plain and faceted, `reps` measured repetitions after one unmeasured;
 *   per-query median CPU (the process's), its p50, the windows of a faceted query, the part's CPU
 *   of the process and of the loop's thread, its GCs by kind, the scored-postings cache and the
 *   window paces (`WindowPace`) after it;
 * - `filtered`: the filtered part's queries;
 * - `pace`: a new `WindowPace` (as a fresh index has); `cache`: the scored postings dropped (the
 *   next term look-up starts the cache afresh); `gc`: a full collection.
 *
 * Reads the index's private parts (its pace, its cache) by name: an experiment, not a bench of
 * `make bench`. `ORDER_PROF=<prefix>`: each `facets` step under the inspector's sampling profiler,
 * written to `<prefix>-<n>.cpuprofile`.
 *
 *   VASWANI_DIR=… node --expose-gc -r ts-node/register/transpile-only bench/search/order-effect.ts [size] [reps] [steps]
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { WindowPace } from '../../service/search/scoring/windowed-top-k';
import type { ItemFilter } from '../../service/content/item-filter';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { collectGarbage } from '../collect-garbage';
import { attributedCorpus, q } from './filters';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const FILTERS: ItemFilter[] = [
  { type: ['article', 'project'] },
  { tag: ['tag-3'] },
  { date_from: '2020-01-01', date_to: '2020-12-31' },
];

async function main(): Promise<void> {
  const [sizeArg, repsArg, stepsArg] = process.argv.slice(2);
  const size = Number(sizeArg ?? 200_000);
  const reps = Number(repsArg ?? 3);
  const steps = (stepsArg ?? 'facets,filtered,facets,pace,facets,filtered,cache,facets,filtered,gc,facets').split(',');
  const v = loadVaswani();
  const index = new EmbeddedIndex({ indexSliceMs: 1000 });
  const any = index as unknown as {
    windowPace: WindowPace;
    compact: {
      fillVocabulary(ms: number): Promise<void>;
      postingCache: Map<string, unknown>;
      postingCacheSize: number;
      postingCacheKey: string;
      postingCacheVersion: number;
    };
  };
  let t = performance.now();
  await index.replaceAll(attributedCorpus(v, size));
  await index.settled();
  await any.compact.fillVocabulary(1000);
  await index.search(q('', { filter: { type: ['project'] } }));
  process.stderr.write(`indexed ${size} in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  const texts = v.queries.map((x) => x.text);
  const big: string[] = [];
  for (const text of texts) if ((await index.search(q(text))).total >= 100_000 || size < 1e6) big.push(text);
  // Windows per query: every timed window sets the pace.
  let windows = 0;
  const instrument = () => {
    const pace = any.windowPace;
    const set = pace.set.bind(pace);
    pace.set = (...a: Parameters<WindowPace['set']>) => {
      windows++;
      set(...a);
    };
  };
  instrument();
  const state = () => {
    const c = any.compact;
    const kinds = (any.windowPace as unknown as { kinds: Array<Map<unknown, number>> }).kinds.map((m) =>
      [...m.values()].map((x) => x.toFixed(0)).join('/'),
    );
    return `cache ${c.postingCache.size} terms ${(c.postingCacheSize / 2 ** 20).toFixed(0)} MB; pace ${kinds.join(' | ')}; heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`;
  };
  const facets = async (label: string) => {
    const f: number[][] = big.map(() => []);
    const p: number[][] = big.map(() => []);
    const w: number[][] = big.map(() => []);
    const t0 = cpu();
    const loop = loopThreadCpu();
    const l0 = loop();
    const gcs = new Map<number, { n: number; ms: number }>();
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind: number } }).detail?.kind ?? -1;
        const g = gcs.get(kind) ?? { n: 0, ms: 0 };
        g.n += 1;
        g.ms += e.duration;
        gcs.set(kind, g);
      }
    });
    obs.observe({ entryTypes: ['gc'] });
    for (let r = 0; r <= reps; r++)
      for (const [i, text] of big.entries()) {
        let c = cpu();
        await index.search(q(text));
        const plain = cpu() - c;
        windows = 0;
        c = cpu();
        await index.search(q(text, { facets: ['type', 'tag'] }));
        const faceted = cpu() - c;
        if (r > 0) {
          p[i].push(plain);
          f[i].push(faceted);
          w[i].push(windows);
        }
      }
    obs.disconnect();
    const gc = [...gcs].map(([k, g]) => `kind ${k}: ${g.n}× ${g.ms.toFixed(0)} ms`).join(', ');
    process.stderr.write(
      `${label}: ${big.length} queries, faceted p50 ${median(f.map(median)).toFixed(2)} ms, plain ${median(p.map(median)).toFixed(2)} ms, windows/faceted query p50 ${median(w.map(median))}, part CPU ${((cpu() - t0) / 1000).toFixed(1)} s, loop thread ${(loop() - l0).toFixed(1)} s; GC ${gc}; ${state()}\n`,
    );
  };
  const filtered = async () => {
    const t0 = cpu();
    const f: number[] = [];
    const p: number[] = [];
    for (let r = 0; r < 2; r++)
      for (const text of texts)
        for (const filter of FILTERS) {
          let c = cpu();
          await index.search(q(text));
          p.push(cpu() - c);
          c = cpu();
          await index.search(q(text, { filter }));
          f.push(cpu() - c);
        }
    process.stderr.write(
      `filtered part: ${f.length} pairs, unfiltered p50 ${median(p).toFixed(2)} filtered ${median(f).toFixed(2)} ms, part CPU ${((cpu() - t0) / 1000).toFixed(1)} s; ${state()}\n`,
    );
  };
  let n = 0;
  for (const step of steps) {
    t = performance.now();
    if (step === 'facets') {
      const prof = process.env.ORDER_PROF ? new Session() : undefined;
      if (prof) {
        prof.connect();
        await prof.post('Profiler.enable');
        await prof.post('Profiler.setSamplingInterval', { interval: 250 });
        await prof.post('Profiler.start');
      }
      await facets(`facets #${++n}`);
      if (prof) {
        const { profile } = await prof.post('Profiler.stop');
        writeFileSync(`${process.env.ORDER_PROF}-${n}.cpuprofile`, JSON.stringify(profile));
        prof.disconnect();
      }
    } else if (step === 'filtered') await filtered();
    else if (step === 'pace') {
      any.windowPace = new WindowPace();
      instrument();
      process.stderr.write(`pace reset\n`);
    } else if (step === 'cache') {
      // The next term look-up finds the key changed and the version moved: the cache emptied, its arrays to the pools.
      any.compact.postingCacheKey = '';
      any.compact.postingCacheVersion = -1;
      process.stderr.write(`cache cleared\n`);
    } else if (step === 'gc') {
      collectGarbage();
      process.stderr.write(`gc\n`);
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
