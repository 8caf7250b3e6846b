/**
 * Event-loop stalls of the search index while it ingests: Vaswani grown to `size` (default
 * 200,000) upserted in batches of 1,000 items (as `POST /api/ingest-batch` hands them to the
 * index) into an empty index, while one query at a time runs beside it (the 93 Vaswani queries
 * and their 2-word forms in turn, uncached). `perf_hooks.monitorEventLoopDelay` (1 ms
 * resolution) gives the longest stall (wall time) and its p99. On a shared machine a stall's
 * wall time is inflated by whatever else runs, so the longest stall is also measured in CPU
 * time (`cpuStall`: process CPU between two ticks of a 1 ms interval, i.e. the longest step the
 * event loop ran), and the longest garbage-collection pause is reported. The longest single
 * query too. Then one 1 MB item is upserted into the full index with queries beside it. In
 * process, no HTTP.
 *
 * `node --expose-gc -r ts-node/register/transpile-only bench/search/stall.ts [size] [--no-queries] [--attribute[=ms] [--units]]`
 * `--attribute`: every stall of the ingest over 30 ms (or `ms`) with what filled it (GC pauses by
 * kind, the index's slices, and where a slice of 20 ms or more yielded: `stall-attribution.ts`),
 * on stderr, and a summary in the result. `--units` too: where a long slice's last unit of work
 * began (the stack of every `maybeYield` call is kept, which costs a few µs a call).
 * Uses only `EmbeddedIndex`'s public API, so the same file runs against an older tree (A/B).
 */
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';
import { attribute, summarize, type AttributedStall } from './stall-attribution';
import { heldCorpus } from './held-items';

/** What one run measured, milliseconds unless named otherwise. */
export interface StallRun {
  readonly docs: number;
  readonly ingestSeconds: number;
  readonly queries: number;
  readonly maxStall: number;
  readonly p99Stall: number;
  readonly meanStall: number;
  readonly cpuStall: number;
  readonly maxGc: number;
  readonly maxQuery: number;
  readonly p99Query: number;
  readonly bigItemMaxStall: number;
  readonly bigItemCpuStall: number;
  readonly bigItemMs: number;
  /** With `--attribute`: the ingest's stalls over 30 ms, summed by what filled them. */
  readonly attributed?: Record<string, number>;
  /** With `--attribute`: gaps between two ticks of a 1 ms timer by how many of the index's slices ended in them. */
  readonly slicesPerGap?: Record<string, number>;
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0;
}

/** Runs `work` with queries one at a time beside it (unless `withQueries` is false); the loop's delay meanwhile. */
export async function watch(
  index: EmbeddedIndex,
  texts: readonly string[],
  withQueries: boolean,
  work: () => Promise<void>,
  attributing?: number,
) {
  const attribution = attributing ? attribute(attributing, process.argv.includes('--units')) : undefined;
  const h = monitorEventLoopDelay({ resolution: 1 });
  const times: number[] = [];
  let done = false;
  let i = 0;
  const loop = async () => {
    while (!done) {
      const t = performance.now();
      await index.search({ text: texts[i++ % texts.length], limit: 10, offset: 0 });
      times.push(performance.now() - t);
      await new Promise((r) => setImmediate(r));
    }
  };
  let cpuStall = 0;
  let last = process.cpuUsage();
  // The loop thread's own CPU between two ticks (schedstat, as the service's busy-max gauge):
  // without the GC's helper threads, which the process's CPU counts.
  const loopCpu = loopThreadCpu();
  let loopStall = 0;
  let lastLoop = loopCpu();
  const tick = setInterval(() => {
    const now = process.cpuUsage();
    cpuStall = Math.max(cpuStall, (now.user - last.user + now.system - last.system) / 1000);
    last = now;
    const loop = loopCpu();
    loopStall = Math.max(loopStall, (loop - lastLoop) * 1000);
    lastLoop = loop;
  }, 1);
  let maxGc = 0;
  let majorGcs = 0;
  let minorGcs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_WEAKCB) maxGc = Math.max(maxGc, e.duration);
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorGcs += 1;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minorGcs += 1;
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  h.enable();
  const querying = withQueries ? loop() : Promise.resolve();
  const t0 = performance.now();
  await work();
  const took = performance.now() - t0;
  done = true;
  await querying;
  // Lets the histogram's and the tick's timers fire once more, so a stall at the very end counts.
  await new Promise((r) => setTimeout(r, 20));
  h.disable();
  clearInterval(tick);
  gc.disconnect();
  const longUnits = attribution?.longUnits();
  const stalls = attribution?.stop();
  return {
    stalls,
    longUnits,
    slicesPerGap: attribution?.slicesPerGap(),
    took,
    maxStall: ms(h.max),
    p99Stall: ms(h.percentile(99)),
    meanStall: ms(h.mean),
    cpuStall: Math.round(cpuStall * 10) / 10,
    loopStall: Math.round(loopStall * 10) / 10,
    maxGc: Math.round(maxGc * 10) / 10,
    majorGcs,
    minorGcs,
    queries: times.length,
    maxQuery: Math.max(0, ...times),
    p50Query: [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0,
    p99Query: p99(times),
  };
}

export async function stall(size: number, withQueries: boolean, attributing?: number): Promise<StallRun> {
  const v = loadVaswani();
  const now = new Date(0).toISOString();
  // Items as the service holds them (held-items.ts).
  const items = heldCorpus(v.items, size);
  const texts = v.queries.map((q) => q.text);
  const all = [...texts, ...twoWordQueries(texts)];
  const index = new EmbeddedIndex();
  // A first batch so that queries have something to rank from the start.
  await index.upsert(items.slice(0, 1000));
  const ingest = await watch(
    index,
    all,
    withQueries,
    async () => {
      for (let at = 1000; at < items.length; at += 1000) await index.upsert(items.slice(at, at + 1000));
    },
    attributing,
  );
  for (const s of ingest.stalls ?? []) process.stderr.write(`${describe(s)}\n`);
  for (const u of ingest.longUnits ?? [])
    process.stderr.write(`unit ${u.n}× max ${u.max} ms (${u.maxNoGc} without GC): ${u.where}\n`);
  const words = v.items.flatMap((i) => i.body.split(/\s+/));
  let body = '';
  for (let k = 0; body.length < 1_000_000; k++) body += `${words[k % words.length]}${k % 13 === 0 ? '\n' : ' '}`;
  const big = await watch(
    index,
    all,
    withQueries,
    () =>
      index.upsert([
        { id: 'big-item', type: 'article', title: 'one megabyte', body, tags: [], created_at: now, updated_at: now },
      ]),
    attributing,
  );
  for (const s of big.stalls ?? []) process.stderr.write(`1 MB item: ${describe(s)}\n`);
  for (const u of big.longUnits ?? [])
    process.stderr.write(`1 MB item: unit ${u.n}× max ${u.max} ms (${u.maxNoGc} without GC): ${u.where}\n`);
  return {
    docs: index.size(),
    ingestSeconds: Math.round(ingest.took / 100) / 10,
    queries: ingest.queries,
    maxStall: ingest.maxStall,
    p99Stall: ingest.p99Stall,
    meanStall: ingest.meanStall,
    cpuStall: ingest.cpuStall,
    maxGc: ingest.maxGc,
    maxQuery: Math.round(ingest.maxQuery * 10) / 10,
    p99Query: Math.round(ingest.p99Query * 10) / 10,
    bigItemMaxStall: big.maxStall,
    bigItemCpuStall: big.cpuStall,
    bigItemMs: Math.round(big.took),
    ...(ingest.stalls ? { attributed: summarize(ingest.stalls), slicesPerGap: ingest.slicesPerGap } : {}),
  };
}

function describe(s: AttributedStall): string {
  const gc = Object.entries(s.gc)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `stall ${s.ms} ms at ${s.start}: gc [${gc}] slices [${s.slices.join(', ')}] other ${s.other}`;
}

if (require.main === module) {
  const size = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200_000);
  const attributing = process.argv.find((a) => a.startsWith('--attribute'));
  stall(
    size,
    !process.argv.includes('--no-queries'),
    attributing ? Number(attributing.split('=')[1] ?? 30) : undefined,
  ).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
